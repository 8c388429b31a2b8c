// fa-tune --merge (db/merge.hpp): another database's measurements join this one without replacing any this
// one has, under one run named after the source; best configs become the faster of both; the other file is
// only read, and anything that is not a database of this schema is refused with one line.
#include "db/merge.hpp"

#include <catch2/catch.hpp>

#include <fstream>

#include "db/schema.hpp"
#include "db/tuning_store.hpp"
#include "tests/db/temp_dir.hpp"

using namespace fl::db;

namespace {
GpuKey const kH200{"NVIDIA H200", 9, 0, 132, "580.159.04", 13000};
ProblemKey const kProblem{4, 16, 16, 4096, 4096, 128, "bf16", false, "fwd"};
MeasurementKey key(std::string config) {
  return {kH200, "13.0", std::string(64, 'c'), "fa2_sm80", std::move(config), kProblem};
}
Measurement ok(double ms) {
  Measurement m;
  m.verdict = "ok";
  m.median_ms = m.p20_ms = m.p80_ms = ms;
  m.runs = 30;
  m.tflops = 300.0 / ms;
  m.protocol = TimingProtocol{5, static_cast<int>(ms * 100)};  // told apart by their timing
  return m;
}
void best(Database& db, std::string config, double ms) {
  store_best_config(db, BestConfig{kH200, kProblem, "fa2_sm80", std::move(config), ms, 300.0 / ms, "measured",
                                   "13.0", std::string(64, 'c'), ""});
}
}  // namespace

TEST_CASE("merging another database imports what is new, keeps what is here, and the faster best wins",
          "[db][tuning]") {
  test::TempDir dir;
  auto here = open_database(dir / "here.sqlite");
  {
    auto other = open_database(dir / "other.sqlite");
    store_measurement(other, key("kBlockM=64"), ok(9.0));  // here has this key: kept as it is
    store_measurement(other, key("kBlockM=128"), ok(1.5));
    store_measurement(other, key("kBlockM=32"), ok(3.0));
    best(other, "kBlockM=128", 1.5);
  }
  store_measurement(here, key("kBlockM=64"), ok(2.0));
  best(here, "kBlockM=64", 2.0);

  auto const counts = merge_measurements(here, dir / "other.sqlite");
  CHECK(counts.imported == 2);
  CHECK(counts.already_here == 1);
  CHECK(counts.best_updated == 1);
  CHECK(*find_measurement(here, key("kBlockM=64"))->median_ms == 2.0);
  auto const imported = find_measurement(here, key("kBlockM=128"));
  REQUIRE(imported);
  CHECK(*imported->median_ms == 1.5);
  CHECK(imported->protocol == TimingProtocol{5, 150});  // how it was timed comes with it
  REQUIRE(imported->run_id);
  {
    auto run = here.prepare("SELECT command FROM tuning_runs WHERE run_id = ?");
    run.bind_int64(1, *imported->run_id).step();
    CHECK(run.column_text(0) == "fa-tune --merge " + (dir / "other.sqlite").string());
  }  // finished before the next merge: DETACH waits for no statement
  auto const bests = best_configs(here);
  REQUIRE(bests.size() == 1);
  CHECK(bests[0].config == "kBlockM=128");

  auto const again = merge_measurements(here, dir / "other.sqlite");  // idempotent
  CHECK(again.imported == 0);
  CHECK(again.already_here == 3);
  CHECK(again.best_updated == 0);
}

TEST_CASE("merging refuses what is not a database of this schema, and changes nothing", "[db][tuning]") {
  test::TempDir dir;
  auto here = open_database(dir / "here.sqlite");
  CHECK_THROWS_WITH(merge_measurements(here, dir / "missing.sqlite"), Catch::Contains("is not a file"));
  {
    Database old(dir / "old.sqlite");
    migrate(old, 5);
  }
  CHECK_THROWS_WITH(merge_measurements(here, dir / "old.sqlite"), Catch::Contains("has schema version 5"));
  std::ofstream(dir / "text.sqlite") << "not a database";
  CHECK_THROWS(merge_measurements(here, dir / "text.sqlite"));
  auto rows = here.prepare("SELECT count(*) FROM tuning_runs");
  rows.step();
  CHECK(rows.column_int64(0) == 0);
}
