#include "db/tuning_runs.hpp"

#include <catch2/catch.hpp>

#include "db/schema.hpp"

using namespace fl::db;

// tuner/tune/cross_check reads which GPU worker made a run from its stored command, through db/ (no SQL
// outside db/).
TEST_CASE("a tuning run's command is read back by its id, and an unknown id has none", "[db][tuning]") {
  Database db(":memory:");
  migrate(db);
  auto const first = begin_tuning_run(db, "fa-tune --gpus 0,1 [GPU 1 GPU-abc]");
  auto const repeat = begin_tuning_run(db, "fa-tune --noise-runs 2", first, 2);
  CHECK(tuning_run_command(db, first) == "fa-tune --gpus 0,1 [GPU 1 GPU-abc]");
  CHECK(tuning_run_command(db, repeat) == "fa-tune --noise-runs 2");
  CHECK_FALSE(tuning_run_command(db, repeat + 100).has_value());
}
