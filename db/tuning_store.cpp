#include "db/tuning_store.hpp"

#include <chrono>

#include "common/utc_time.hpp"
#include "db/transaction.hpp"

namespace fl::db {

std::string utc_timestamp() {
  return common::iso_utc(std::chrono::system_clock::now(), 3);
}

std::int64_t gpu_id(Database& db, GpuKey const& gpu) {
  auto insert = db.prepare(
      "INSERT INTO gpus (name, cc_major, cc_minor, sm_count, driver_version) VALUES (?, ?, ?, ?, ?) "
      "ON CONFLICT DO NOTHING");  // cuda_driver_api: set below, for new and old rows alike
  insert.bind_text(1, gpu.name).bind_int64(2, gpu.cc_major).bind_int64(3, gpu.cc_minor);
  insert.bind_int64(4, gpu.sm_count).bind_text(5, gpu.driver_version).run();
  auto select = db.prepare(
      "SELECT gpu_id FROM gpus WHERE name = ? AND cc_major = ? AND cc_minor = ? AND sm_count = ? AND "
      "driver_version = ?");
  select.bind_text(1, gpu.name).bind_int64(2, gpu.cc_major).bind_int64(3, gpu.cc_minor);
  select.bind_int64(4, gpu.sm_count).bind_text(5, gpu.driver_version);
  select.step();
  auto const id = select.column_int64(0);
  if (gpu.cuda_driver_api > 0) {
    // Rows interned before schema v5 (or by a caller that did not know it) learn the API version once.
    auto update =
        db.prepare("UPDATE gpus SET cuda_driver_api = ? WHERE gpu_id = ? AND cuda_driver_api IS NULL");
    update.bind_int64(1, gpu.cuda_driver_api).bind_int64(2, id).run();
  }
  return id;
}

namespace {

std::int64_t problem_id(Database& db, ProblemKey const& p) {
  auto insert = db.prepare(
      "INSERT INTO problems (batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, dtype, causal, "
      "direction) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING");
  insert.bind_int64(1, p.batch).bind_int64(2, p.heads_q).bind_int64(3, p.heads_kv).bind_int64(4, p.seqlen_q);
  insert.bind_int64(5, p.seqlen_k).bind_int64(6, p.head_dim).bind_text(7, p.dtype);
  insert.bind_int64(8, p.causal ? 1 : 0).bind_text(9, p.direction).run();
  auto select = db.prepare(
      "SELECT problem_id FROM problems WHERE batch = ? AND heads_q = ? AND heads_kv = ? AND seqlen_q = ? AND "
      "seqlen_k = ? AND head_dim = ? AND dtype = ? AND causal = ? AND direction = ?");
  select.bind_int64(1, p.batch).bind_int64(2, p.heads_q).bind_int64(3, p.heads_kv).bind_int64(4, p.seqlen_q);
  select.bind_int64(5, p.seqlen_k).bind_int64(6, p.head_dim).bind_text(7, p.dtype);
  select.bind_int64(8, p.causal ? 1 : 0).bind_text(9, p.direction);
  select.step();
  return select.column_int64(0);
}

constexpr char const* kMeasurementColumns =
    "verdict, diagnosis, median_ms, p20_ms, p80_ms, min_ms, max_ms, runs, tflops, clock_mhz, temperature_c, "
    "compile_cache_key, measured_at, run_id, warmup_runs, settle_ms";

Measurement read_measurement(Statement& s, int first) {
  Measurement m;
  m.verdict = s.column_text(first);
  m.diagnosis = s.column_text(first + 1);
  m.median_ms = s.column_optional_double(first + 2);
  m.p20_ms = s.column_optional_double(first + 3);
  m.p80_ms = s.column_optional_double(first + 4);
  m.min_ms = s.column_optional_double(first + 5);
  m.max_ms = s.column_optional_double(first + 6);
  if (auto runs = s.column_optional_int64(first + 7)) m.runs = static_cast<int>(*runs);
  m.tflops = s.column_optional_double(first + 8);
  m.clock_mhz = s.column_optional_double(first + 9);
  m.temperature_c = s.column_optional_double(first + 10);
  m.compile_cache_key = s.column_optional_text(first + 11).value_or("");
  m.measured_at = s.column_text(first + 12);
  m.run_id = s.column_optional_int64(first + 13);
  auto const warmup = s.column_optional_int64(first + 14);
  auto const settle = s.column_optional_int64(first + 15);
  if (warmup && settle) m.protocol = TimingProtocol{static_cast<int>(*warmup), static_cast<int>(*settle)};
  return m;
}

std::optional<std::int64_t> measurement_id(Database& db, std::int64_t gpu, std::int64_t problem,
                                           MeasurementKey const& key) {
  auto id = db.prepare(
      "SELECT measurement_id FROM measurements WHERE gpu_id = ? AND nvrtc_version = ? AND source_hash = ? "
      "AND family = ? AND config = ? AND problem_id = ?");
  id.bind_int64(1, gpu)
      .bind_text(2, key.nvrtc_version)
      .bind_text(3, key.source_hash)
      .bind_text(4, key.family);
  id.bind_text(5, key.config).bind_int64(6, problem);
  if (!id.step()) return std::nullopt;
  return id.column_int64(0);
}

void bind_optional_int(Statement& s, int index, std::optional<std::int64_t> value) {
  if (value)
    s.bind_int64(index, *value);
  else
    s.bind_null(index);
}

// Binds the protocol's two columns at `index` and `index + 1` (NULL, NULL: not timed).
void bind_protocol(Statement& s, int index, std::optional<TimingProtocol> const& protocol) {
  bind_optional_int(s, index, protocol ? std::optional<std::int64_t>(protocol->warmup_runs) : std::nullopt);
  bind_optional_int(s, index + 1, protocol ? std::optional<std::int64_t>(protocol->settle_ms) : std::nullopt);
}

}  // namespace

std::optional<Measurement> find_measurement(Database& database, MeasurementKey const& key) {
  Transaction transaction(database, TransactionMode::deferred);
  auto const gpu = gpu_id(database, key.gpu);
  auto const problem = problem_id(database, key.problem);
  auto s =
      database.prepare(std::string("SELECT ") + kMeasurementColumns +
                       " FROM measurements WHERE gpu_id = ? AND nvrtc_version = ? AND source_hash = ? AND "
                       "family = ? AND config = ? AND problem_id = ?");
  s.bind_int64(1, gpu).bind_text(2, key.nvrtc_version).bind_text(3, key.source_hash).bind_text(4, key.family);
  s.bind_text(5, key.config).bind_int64(6, problem);
  std::optional<Measurement> found;
  if (s.step()) found = read_measurement(s, 0);
  transaction.commit();
  return found;
}

std::int64_t store_measurement(Database& database, MeasurementKey const& key, Measurement const& m) {
  Transaction transaction(database);
  auto const gpu = gpu_id(database, key.gpu);
  auto const problem = problem_id(database, key.problem);
  auto s = database.prepare(
      std::string(
          "INSERT INTO measurements (gpu_id, nvrtc_version, source_hash, family, config, problem_id, ") +
      kMeasurementColumns +
      ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (gpu_id, nvrtc_version, source_hash, family, config, problem_id) DO UPDATE SET "
      "verdict = excluded.verdict, diagnosis = excluded.diagnosis, median_ms = excluded.median_ms, "
      "p20_ms = excluded.p20_ms, p80_ms = excluded.p80_ms, min_ms = excluded.min_ms, max_ms = "
      "excluded.max_ms, "
      "runs = excluded.runs, tflops = excluded.tflops, clock_mhz = excluded.clock_mhz, "
      "temperature_c = excluded.temperature_c, compile_cache_key = excluded.compile_cache_key, "
      "measured_at = excluded.measured_at, run_id = excluded.run_id, warmup_runs = excluded.warmup_runs, "
      "settle_ms = excluded.settle_ms");
  s.bind_int64(1, gpu).bind_text(2, key.nvrtc_version).bind_text(3, key.source_hash).bind_text(4, key.family);
  s.bind_text(5, key.config).bind_int64(6, problem).bind_text(7, m.verdict).bind_text(8, m.diagnosis);
  s.bind_optional_double(9, m.median_ms)
      .bind_optional_double(10, m.p20_ms)
      .bind_optional_double(11, m.p80_ms);
  s.bind_optional_double(12, m.min_ms).bind_optional_double(13, m.max_ms);
  if (m.runs)
    s.bind_int64(14, *m.runs);
  else
    s.bind_null(14);
  s.bind_optional_double(15, m.tflops).bind_optional_double(16, m.clock_mhz);
  s.bind_optional_double(17, m.temperature_c);
  s.bind_optional_text(
      18, m.compile_cache_key.empty() ? std::nullopt : std::optional<std::string_view>(m.compile_cache_key));
  s.bind_text(19, m.measured_at.empty() ? utc_timestamp() : m.measured_at);
  bind_optional_int(s, 20, m.run_id);
  bind_protocol(s, 21, m.protocol);
  s.run();
  auto const row = *measurement_id(database, gpu, problem, key);
  transaction.commit();
  return row;
}

void store_remeasurement(Database& database, MeasurementKey const& key, std::int64_t run_id,
                         Measurement const& m) {
  Transaction transaction(database);
  auto const gpu = gpu_id(database, key.gpu);
  auto const problem = problem_id(database, key.problem);
  auto const stored = measurement_id(database, gpu, problem, key);
  if (!stored) {
    Measurement first = m;
    first.run_id = run_id;
    store_measurement(database, key, first);  // nested: a savepoint inside this transaction
    transaction.commit();
    return;
  }
  auto s = database.prepare(
      "INSERT OR REPLACE INTO remeasurements (run_id, measurement_id, verdict, diagnosis, median_ms, p20_ms, "
      "p80_ms, min_ms, max_ms, runs, tflops, clock_mhz, temperature_c, measured_at, warmup_runs, settle_ms) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind_int64(1, run_id).bind_int64(2, *stored).bind_text(3, m.verdict).bind_text(4, m.diagnosis);
  s.bind_optional_double(5, m.median_ms).bind_optional_double(6, m.p20_ms).bind_optional_double(7, m.p80_ms);
  s.bind_optional_double(8, m.min_ms).bind_optional_double(9, m.max_ms);
  bind_optional_int(s, 10, m.runs ? std::optional<std::int64_t>(*m.runs) : std::nullopt);
  s.bind_optional_double(11, m.tflops).bind_optional_double(12, m.clock_mhz);
  s.bind_optional_double(13, m.temperature_c);
  s.bind_text(14, m.measured_at.empty() ? utc_timestamp() : m.measured_at);
  bind_protocol(s, 15, m.protocol);
  s.run();
  transaction.commit();
}

std::vector<Measurement> remeasurements_of(Database& database, MeasurementKey const& key) {
  Transaction transaction(database, TransactionMode::deferred);
  auto const gpu = gpu_id(database, key.gpu);
  auto const problem = problem_id(database, key.problem);
  std::vector<Measurement> rows;
  if (auto const id = measurement_id(database, gpu, problem, key)) {
    auto s = database.prepare(
        "SELECT verdict, diagnosis, median_ms, p20_ms, p80_ms, min_ms, max_ms, runs, tflops, clock_mhz, "
        "temperature_c, NULL, measured_at, run_id, warmup_runs, settle_ms FROM remeasurements WHERE "
        "measurement_id = ? ORDER BY run_id");
    s.bind_int64(1, *id);
    while (s.step()) rows.push_back(read_measurement(s, 0));
  }
  transaction.commit();
  return rows;
}

std::vector<std::pair<std::string, Measurement>> measurements_for(Database& database,
                                                                  MeasurementKey const& prefix) {
  Transaction transaction(database, TransactionMode::deferred);
  auto const gpu = gpu_id(database, prefix.gpu);
  auto const problem = problem_id(database, prefix.problem);
  auto s =
      database.prepare(std::string("SELECT config, ") + kMeasurementColumns +
                       " FROM measurements WHERE gpu_id = ? AND nvrtc_version = ? AND source_hash = ? AND "
                       "family = ? AND problem_id = ? ORDER BY measurement_id");
  s.bind_int64(1, gpu).bind_text(2, prefix.nvrtc_version).bind_text(3, prefix.source_hash);
  s.bind_text(4, prefix.family).bind_int64(5, problem);
  std::vector<std::pair<std::string, Measurement>> rows;
  while (s.step()) rows.emplace_back(s.column_text(0), read_measurement(s, 1));
  transaction.commit();
  return rows;
}

void store_best_config(Database& database, BestConfig const& best) {
  Transaction transaction(database);
  auto const gpu = gpu_id(database, best.gpu);
  auto const problem = problem_id(database, best.problem);
  auto s = database.prepare(
      "INSERT INTO best_configs (gpu_id, problem_id, family, config, median_ms, tflops, source, "
      "nvrtc_version, "
      "source_hash, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (gpu_id, problem_id, family) DO UPDATE SET config = excluded.config, "
      "median_ms = excluded.median_ms, tflops = excluded.tflops, source = excluded.source, "
      "nvrtc_version = excluded.nvrtc_version, source_hash = excluded.source_hash, "
      "recorded_at = excluded.recorded_at");
  s.bind_int64(1, gpu).bind_int64(2, problem).bind_text(3, best.family).bind_text(4, best.config);
  s.bind_double(5, best.median_ms).bind_double(6, best.tflops).bind_text(7, best.source);
  s.bind_text(8, best.nvrtc_version);
  s.bind_optional_text(
      9, best.source_hash.empty() ? std::nullopt : std::optional<std::string_view>(best.source_hash));
  s.bind_text(10, best.recorded_at.empty() ? utc_timestamp() : best.recorded_at);
  s.run();
  transaction.commit();
}

std::vector<BestConfig> best_configs(Database& database, std::optional<std::string> const& gpu_name) {
  auto s = database.prepare(
      "SELECT g.name, g.cc_major, g.cc_minor, g.sm_count, g.driver_version, p.batch, p.heads_q, p.heads_kv, "
      "p.seqlen_q, p.seqlen_k, p.head_dim, p.dtype, p.causal, p.direction, b.family, b.config, b.median_ms, "
      "b.tflops, b.source, b.nvrtc_version, b.source_hash, b.recorded_at, g.cuda_driver_api FROM "
      "best_configs b "
      "JOIN gpus g USING (gpu_id) JOIN problems p USING (problem_id) WHERE ?1 IS NULL OR g.name = ?1 "
      "ORDER BY b.family, p.dtype, p.head_dim, p.causal, p.direction, p.seqlen_q");
  s.bind_optional_text(1, gpu_name ? std::optional<std::string_view>(*gpu_name) : std::nullopt);
  std::vector<BestConfig> rows;
  while (s.step()) {
    BestConfig b;
    b.gpu = {s.column_text(0), int(s.column_int64(1)), int(s.column_int64(2)), int(s.column_int64(3)),
             s.column_text(4)};
    b.problem = {int(s.column_int64(5)), int(s.column_int64(6)),  int(s.column_int64(7)),
                 int(s.column_int64(8)), int(s.column_int64(9)),  int(s.column_int64(10)),
                 s.column_text(11),      s.column_int64(12) != 0, s.column_text(13)};
    b.family = s.column_text(14);
    b.config = s.column_text(15);
    b.median_ms = s.column_double(16);
    b.tflops = s.column_double(17);
    b.source = s.column_text(18);
    b.nvrtc_version = s.column_text(19);
    b.source_hash = s.column_optional_text(20).value_or("");
    b.recorded_at = s.column_text(21);
    b.gpu.cuda_driver_api = int(s.column_optional_int64(22).value_or(0));
    rows.push_back(std::move(b));
  }
  return rows;
}

}  // namespace fl::db
