#pragma once
// What the tune loop's tests share (tune_loop_test.cpp, tune_loop_evaluator_test.cpp): a recorded-looking
// landscape over fa2_sm80's real space, and a problem with its database in a temporary folder.
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "db/schema.hpp"
#include "device/families/registry.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/strategy/strategies.hpp"
#include "tuner/tune/replay_evaluator.hpp"
#include "tuner/tune/tune_loop.hpp"

namespace fl::test {

// A recorded-looking landscape over fa2_sm80's real space: time grows away from kBlockM=128, kBlockN=64.
inline std::optional<double> landscape(device::Config const& c) {
  double const m = std::log2(double(c.at("kBlockM"))) - 7.0;
  double const n = std::log2(double(c.at("kBlockN"))) - 6.0;
  return 1.0 + 0.2 * m * m + 0.1 * n * n + 0.01 * c.at("kStages") + 0.001 * device::value_or(c, "kWarpsN", 1);
}

struct Setup {
  test::TempKernelsDir dir;
  std::filesystem::path db_path = dir.path() / "tune.sqlite";
  std::unique_ptr<device::Family> family = device::find_family("fa2_sm80");
  device::Problem problem =
      device::headline_problem(4096, 128, false, common::Precision::bf16, device::Direction::forward);
  db::GpuKey gpu{"Replay GPU", 9, 0, 132, "13000"};

  tuner::TuneOutcome run(std::function<void()> on_evaluate = {}) {
    auto database = db::open_database(db_path);
    tuner::TuneStore const store{&database, gpu, "13.0", std::string(64, 'a')};
    auto const space = tuner::family_space(*family, problem);
    tuner::ExhaustiveStrategy strategy(space);
    tuner::ReplayEvaluator evaluator(landscape, std::move(on_evaluate));
    return tuner::tune_problem(*family, problem, strategy, space, evaluator, store, {});
  }
  std::int64_t stored_rows() {
    auto database = db::open_database(db_path);
    auto count = database.prepare("SELECT count(*) FROM measurements");
    count.step();
    return count.column_int64(0);
  }
};

}  // namespace fl::test
