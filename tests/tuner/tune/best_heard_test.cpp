// What the tuning loop tells an evaluator about the best so far (Evaluator::hear_best, the input of the
// early stop): the best median before each candidate of a first run, nothing in a --noise-runs repeat (which
// must time every candidate in full), and the loop counts the candidates the evaluator cut.
#include <catch2/catch.hpp>

#include "db/schema.hpp"
#include "db/tuning_runs.hpp"
#include "device/families/registry.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/strategy/strategies.hpp"
#include "tuner/tune/tune_loop.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;

namespace {

// Config i of the exhaustive order takes 1 + (i % 3) ms; a candidate over 2.5x the best heard is cut.
class ListeningEvaluator final : public Evaluator {
 public:
  Evaluation evaluate(Config const&, Problem const&) override {
    double const ms = 1.0 + double(calls_++ % 3);
    Evaluation e;
    e.stats =
        TimingStats{.median_ms = ms, .p20_ms = ms, .p80_ms = ms, .min_ms = ms, .max_ms = ms, .runs = 30};
    e.timing_cut = heard.back() && ms > 2.5 * *heard.back();
    return e;
  }
  void hear_best(std::optional<double> best_ms) override { heard.push_back(best_ms); }
  std::vector<std::optional<double>> heard;

 private:
  int calls_ = 0;
};

}  // namespace

TEST_CASE("the evaluator hears the best so far before each candidate, except in a noise repeat",
          "[tuner][tune]") {
  test::TempKernelsDir dir;
  auto database = db::open_database(dir.path() / "tune.sqlite");
  auto const family = find_family("fa1");
  Problem const problem = headline_problem(1024, 64, false, common::Precision::bf16, Direction::forward);
  // Named first: GCC 12 at -O3 (the portable build) reported the brace-initialised GpuKey's strings as
  // maybe uninitialised inside the aggregate (-Werror=maybe-uninitialized, a false positive).
  db::GpuKey gpu;
  gpu.name = "Fake GPU";
  gpu.cc_major = 9;
  gpu.cc_minor = 0;
  gpu.sm_count = 132;
  gpu.driver_version = "1";
  TuneStore const store{&database, gpu, "13.0", std::string(64, 'a')};
  auto const space = family_space(*family, problem);
  REQUIRE(space.valid_points().size() >= 3);

  ListeningEvaluator first;
  ExhaustiveStrategy strategy(space);
  auto const outcome = tune_problem(*family, problem, strategy, space, first, store, {});
  REQUIRE(first.heard.size() >= 3);
  CHECK_FALSE(first.heard[0]);           // nothing timed before the first candidate
  CHECK(first.heard[1] == Approx(1.0));  // then the best median so far
  CHECK(first.heard[2] == Approx(1.0));
  int const slow = int(first.heard.size()) / 3;  // the third of every three takes 3 ms
  CHECK(outcome.timing_cut == slow);

  auto const run_one = db::begin_tuning_run(database, "fa-tune (test)");
  TuneLimits repeat;
  repeat.remeasure_run = db::begin_tuning_run(database, "fa-tune (test)", run_one, 2);
  ListeningEvaluator again;
  ExhaustiveStrategy strategy_again(space);
  auto const repeated = tune_problem(*family, problem, strategy_again, space, again, store, repeat);
  CHECK(again.heard.size() == first.heard.size());
  for (auto const& heard : again.heard) CHECK_FALSE(heard);
  CHECK(repeated.timing_cut == 0);
}
