// The cross-check of --gpus workers (tuner/tune/cross_check.hpp): the reference timed by each worker's run,
// within the noise or not, and which GPU is off by how much.
#include <catch2/catch.hpp>

#include "db/schema.hpp"
#include "db/tuning_runs.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tuner/tune/cross_check.hpp"

using namespace fl;
using namespace fl::tuner;

namespace {
db::Measurement timed(double ms, std::int64_t run) {
  db::Measurement m;
  m.verdict = "ok";
  m.median_ms = ms;
  m.p20_ms = ms * 0.998;
  m.p80_ms = ms * 1.002;
  m.runs = 30;
  m.tflops = 300.0 / ms;
  m.run_id = run;
  return m;
}
}  // namespace

TEST_CASE("the workers' reference timings agree within the noise, or the GPU that is off is named",
          "[tuner][tune]") {
  test::TempKernelsDir dir;
  auto database = db::open_database(dir.path() / "x.sqlite");
  db::MeasurementKey const key{{"NVIDIA H200", 9, 0, 132, "580.159.04", 13000},
                               "13.0",
                               std::string(64, 'a'),
                               "fa2_sm80",
                               "kBlockM=128",
                               {4, 16, 16, 4096, 4096, 128, "bf16", false, "fwd"}};
  auto const coordinator = db::begin_tuning_run(database, "fa-tune --gpus 0,1");
  auto const gpu0 = db::begin_tuning_run(database, "fa-tune --gpu-worker 0 --shard 1/2 [GPU 0 GPU-aaaa]");
  auto const gpu1 = db::begin_tuning_run(database, "fa-tune --gpu-worker 1 --shard 2/2 [GPU 1 GPU-bbbb]");
  db::store_measurement(database, key, timed(1.0, gpu0));  // GPU 0 tuned it; its cross-check repeats it
  db::store_remeasurement(database, key, gpu0, timed(1.0, gpu0));
  db::store_remeasurement(database, key, gpu1, timed(1.01, gpu1));
  auto const close = cross_check(database, key, coordinator);
  REQUIRE(close.timings.size() == 2);
  CHECK(close.agree);
  CHECK(close.spread == Approx(0.01));
  CHECK_THAT(close.text, Catch::Contains("GPU 0 1.000 ms, GPU 1 1.010 ms, within the noise (1.0% <= 2.0%)"));

  db::store_remeasurement(database, key, gpu1, timed(1.10, gpu1));  // GPU 1 again, now 10% slower
  auto const off = cross_check(database, key, coordinator);
  CHECK_FALSE(off.agree);
  CHECK_THAT(off.text, Catch::Contains("GPU 1 is 10.0% slower than GPU 0, more than the noise (2.0%)"));

  // Rows of runs before the coordinator's (an older single-GPU tuning) are not part of the check.
  CHECK(cross_check(database, key, gpu1).timings.empty());
}
