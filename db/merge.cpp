#include "db/merge.hpp"

#include "db/integrity.hpp"
#include "db/schema.hpp"
#include "db/transaction.hpp"
#include "db/tuning_runs.hpp"
#include "db/tuning_store.hpp"

namespace fl::db {

namespace {
// OTHER's gpu and problem ids mapped to this database's by their natural keys (the tables' UNIQUE columns).
constexpr char const* kGpuMap =
    "SELECT o.gpu_id AS other_id, m.gpu_id AS here_id FROM other.gpus o JOIN main.gpus m ON m.name = o.name "
    "AND "
    "m.cc_major = o.cc_major AND m.cc_minor = o.cc_minor AND m.sm_count = o.sm_count AND "
    "m.driver_version = o.driver_version";
constexpr char const* kProblemMap =
    "SELECT o.problem_id AS other_id, m.problem_id AS here_id FROM other.problems o JOIN main.problems m ON "
    "m.batch = o.batch AND m.heads_q = o.heads_q AND m.heads_kv = o.heads_kv AND m.seqlen_q = o.seqlen_q AND "
    "m.seqlen_k = o.seqlen_k AND m.head_dim = o.head_dim AND m.dtype = o.dtype AND m.causal = o.causal AND "
    "m.direction = o.direction";

std::int64_t count(Database& db, std::string const& sql) {
  auto s = db.prepare(sql);
  s.step();
  return s.column_int64(0);
}
}  // namespace

MergeCounts merge_measurements(Database& into, std::filesystem::path const& other) {
  {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(other, ec)) throw UnusableDatabaseError(other, "is not a file");
    Database probe(other, DatabaseOptions{.read_only = true});
    int const version = schema_version(probe);
    if (version != current_schema_version())
      throw UnusableDatabaseError(other, "has schema version " + std::to_string(version) +
                                             ", this fa-tune's is " +
                                             std::to_string(current_schema_version()) +
                                             " (run any fa-tune command with --db on it once to migrate it)");
  }
  {
    auto attach = into.prepare("ATTACH DATABASE ? AS other");
    attach.bind_text(1, other.string()).run();
  }  // finalised before DETACH: an unfinalised statement keeps "other" locked
  MergeCounts counts;
  try {
    Transaction transaction(into);
    auto const run_id = begin_tuning_run(into, "fa-tune --merge " + other.string());
    into.execute(
        "INSERT INTO main.gpus (name, cc_major, cc_minor, sm_count, driver_version, cuda_driver_api) SELECT "
        "name, "
        "cc_major, cc_minor, sm_count, driver_version, cuda_driver_api FROM other.gpus WHERE true ON "
        "CONFLICT DO "
        "NOTHING");
    into.execute(
        "INSERT INTO main.problems (batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, dtype, causal, "
        "direction) SELECT batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, dtype, causal, direction "
        "FROM "
        "other.problems WHERE true ON CONFLICT DO NOTHING");
    std::int64_t const before = count(into, "SELECT count(*) FROM main.measurements");
    auto insert = into.prepare(
        std::string(
            "INSERT INTO main.measurements (gpu_id, nvrtc_version, source_hash, family, config, problem_id, "
            "verdict, diagnosis, median_ms, p20_ms, p80_ms, min_ms, max_ms, runs, tflops, clock_mhz, "
            "temperature_c, compile_cache_key, measured_at, run_id, warmup_runs, settle_ms) SELECT "
            "g.here_id, o.nvrtc_version, o.source_hash, o.family, o.config, p.here_id, o.verdict, "
            "o.diagnosis, o.median_ms, o.p20_ms, o.p80_ms, o.min_ms, o.max_ms, o.runs, o.tflops, "
            "o.clock_mhz, o.temperature_c, o.compile_cache_key, o.measured_at, ?, o.warmup_runs, "
            "o.settle_ms FROM other.measurements o JOIN (") +
        kGpuMap + ") g ON g.other_id = o.gpu_id JOIN (" + kProblemMap +
        ") p ON p.other_id = o.problem_id WHERE true ON CONFLICT DO NOTHING");
    insert.bind_int64(1, run_id).run();
    counts.imported = count(into, "SELECT count(*) FROM main.measurements") - before;
    counts.already_here = count(into, "SELECT count(*) FROM other.measurements") - counts.imported;
    // The best config per (GPU, problem, family): OTHER's where this database has none or a slower one.
    auto best = into.prepare(
        std::string(
            "INSERT INTO main.best_configs (gpu_id, problem_id, family, config, median_ms, tflops, source, "
            "nvrtc_version, source_hash, measurement_id, recorded_at) SELECT g.here_id, p.here_id, "
            "o.family, o.config, o.median_ms, o.tflops, o.source, o.nvrtc_version, o.source_hash, NULL, "
            "o.recorded_at FROM other.best_configs o JOIN (") +
        kGpuMap + ") g ON g.other_id = o.gpu_id JOIN (" + kProblemMap +
        ") p ON p.other_id = o.problem_id WHERE true ON CONFLICT (gpu_id, problem_id, family) DO UPDATE SET "
        "config = excluded.config, median_ms = excluded.median_ms, tflops = excluded.tflops, source = "
        "excluded.source, nvrtc_version = excluded.nvrtc_version, source_hash = excluded.source_hash, "
        "measurement_id = NULL, recorded_at = excluded.recorded_at WHERE excluded.median_ms < "
        "best_configs.median_ms");
    best.run();
    counts.best_updated = into.changes();
    transaction.commit();
  } catch (...) {
    into.execute("DETACH DATABASE other");
    throw;
  }
  into.execute("DETACH DATABASE other");
  return counts;
}

}  // namespace fl::db
