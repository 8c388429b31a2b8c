#include "db/tuning_store.hpp"

#include <catch2/catch.hpp>

#include "db/schema.hpp"
#include "db/seed_configs.hpp"
#include "db/tuning_runs.hpp"

using namespace fl::db;

namespace {
MeasurementKey key_for(GpuKey gpu) {
  return {gpu,        "13.0",       std::string(64, 'c'),
          "fa2_sm80", "kBlockM=64", ProblemKey{4, 16, 16, 4096, 4096, 128, "bf16", false, "fwd"}};
}
Measurement ok(double ms) {
  Measurement m;
  m.verdict = "ok";
  m.median_ms = m.p20_ms = m.p80_ms = ms;
  m.runs = 30;
  m.tflops = 300.0;
  return m;
}
}  // namespace

TEST_CASE("a measurement names its run, and a repeat is kept beside it", "[db][tuning]") {
  Database db(":memory:");
  migrate(db);
  GpuKey const gpu{"NVIDIA H200", 9, 0, 132, "580.159.04", 13000};
  auto const key = key_for(gpu);
  auto const first = begin_tuning_run(db, "fa-tune --noise-runs 2");
  auto const second = begin_tuning_run(db, "fa-tune --noise-runs 2", first, 2);
  CHECK(second != first);

  // A repeat of a key nobody measured yet becomes its measurement.
  store_remeasurement(db, key, second, ok(2.0));
  REQUIRE(find_measurement(db, key));
  CHECK(find_measurement(db, key)->run_id == second);
  CHECK(remeasurements_of(db, key).empty());

  auto m = ok(1.0);
  m.run_id = first;
  store_measurement(db, key, m);
  store_remeasurement(db, key, second, ok(1.1));
  auto const stored = find_measurement(db, key);
  CHECK(*stored->median_ms == 1.0);
  CHECK(stored->run_id == first);
  auto const repeats = remeasurements_of(db, key);
  REQUIRE(repeats.size() == 1);
  CHECK(*repeats[0].median_ms == 1.1);
  CHECK(repeats[0].run_id == second);
}

TEST_CASE("a measurement and a repeat keep how they were timed, and an untimed one has no protocol",
          "[db][tuning]") {
  Database db(":memory:");
  migrate(db);
  auto const key = key_for(GpuKey{"NVIDIA H200", 9, 0, 132, "580.159.04", 13000});
  auto const run = begin_tuning_run(db, "fa-tune");
  auto timed = ok(1.0);
  timed.protocol = TimingProtocol{5, 0};
  store_measurement(db, key, timed);
  auto repeat = ok(1.1);
  repeat.protocol = TimingProtocol{0, 200};
  store_remeasurement(db, key, run, repeat);
  CHECK(find_measurement(db, key)->protocol == TimingProtocol{5, 0});
  CHECK(remeasurements_of(db, key).at(0).protocol == TimingProtocol{0, 200});

  // Stored again as not timed: the protocol goes with the timing.
  Measurement wrong;
  wrong.verdict = "wrong";
  store_measurement(db, key, wrong);
  CHECK_FALSE(find_measurement(db, key)->protocol);
}

TEST_CASE("the GPU row carries the driver release and the CUDA driver API version", "[db][tuning]") {
  Database db(":memory:");
  migrate(db);
  GpuKey const gpu{"NVIDIA H200", 9, 0, 132, "580.159.04", 13000};
  store_best_config(db, BestConfig{gpu, key_for(gpu).problem, "fa2_sm80", "kBlockM=64", 1.0, 300.0,
                                   "measured", "13.0", std::string(64, 'c'), ""});
  auto const best = best_configs(db, "NVIDIA H200");
  REQUIRE(best.size() == 1);
  CHECK(best[0].gpu.driver_version == "580.159.04");
  CHECK(best[0].gpu.cuda_driver_api == 13000);

  // The seed TSV carries both; the version 1 format (no API column) still reads.
  auto const text = format_seed_configs(best);
  CHECK_THAT(text, Catch::Contains("\tcuda_driver_api\n") && Catch::Contains("580.159.04"));
  auto const parsed = parse_seed_configs(text);
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0].gpu.cuda_driver_api == 13000);
  std::string v1 = text;
  v1.erase(v1.find("\tcuda_driver_api"), std::string("\tcuda_driver_api").size());
  v1.erase(v1.rfind('\t'), v1.rfind('\n') - v1.rfind('\t'));
  auto const old = parse_seed_configs(v1);
  REQUIRE(old.size() == 1);
  CHECK(old[0].gpu.cuda_driver_api == 0);
  CHECK(old[0].gpu.driver_version == "580.159.04");
  auto const shipped = parse_seed_configs(shipped_seed_configs());
  REQUIRE_FALSE(shipped.empty());
  CHECK(shipped[0].gpu.driver_version == "580.159.04");
}

TEST_CASE("a problem's measurements are listed in the order they were first stored, its own only",
          "[db][tuning]") {
  Database db(":memory:");
  migrate(db);
  GpuKey const gpu{"NVIDIA H200", 9, 0, 132, "580.159.04", 13000};
  auto key = key_for(gpu);
  // Stored out of text order: a resumed tuning run hears them as they were measured (tuner/tune/stored_rows).
  for (auto const* config : {"kBlockM=128", "kBlockM=64", "kBlockM=32"}) {
    key.config = config;
    store_measurement(db, key, ok(key.config == "kBlockM=64" ? 1.0 : 2.0));
  }
  key.config = "kBlockM=128";
  store_measurement(db, key, ok(1.5));  // replaced in place: keeps its place
  auto other = key;                     // another problem, source hash and GPU: not listed
  other.problem.seqlen_q = other.problem.seqlen_k = 8192;
  store_measurement(db, other, ok(3.0));
  other = key;
  other.source_hash = std::string(64, 'd');
  store_measurement(db, other, ok(3.0));
  other = key;
  other.gpu.driver_version = "590.1";
  store_measurement(db, other, ok(3.0));

  key.config = "ignored";
  auto const rows = measurements_for(db, key);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].first == "kBlockM=128");
  CHECK(*rows[0].second.median_ms == 1.5);
  CHECK(rows[1].first == "kBlockM=64");
  CHECK(*rows[1].second.median_ms == 1.0);
  CHECK(rows[2].first == "kBlockM=32");
  key.family = "fa1";
  CHECK(measurements_for(db, key).empty());
}
