// The progress line of a run over many problems shows the best of the problem its label names: fa-tune
// measures every problem's default first and then searches each, and on the H100 (2026-12-07) its line read
// "problem 5/6 ... d256 ...: best: kBlockN=160,... 649 TFLOP/s", d128's best, while d256 searched.
#include <catch2/catch.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "tests/tuner/tune/tune_loop_fixture.hpp"

using namespace fl;
using namespace fl::tuner;

TEST_CASE("the progress line shows the best of the problem it names, never another's", "[tuner][tune]") {
  test::Setup s;
  auto database = db::open_database(s.db_path);
  TuneStore const store{&database, s.gpu, "13.0", std::string(64, 'a')};
  std::FILE* sink = std::tmpfile();
  REQUIRE(sink);
  Progress progress("fa-tune", 400, sink, false);

  // A (d128) finds new bests in its search; B (d64) starts at its optimum (the landscape's minimum is
  // fa2_sm80's d64 default), so nothing in B's search is a new best.
  auto const problem_a = s.problem;
  auto const problem_b =
      device::headline_problem(4096, 64, false, common::Precision::bf16, device::Direction::forward);
  auto const space_a = family_space(*s.family, problem_a);
  auto const space_b = family_space(*s.family, problem_b);
  ExhaustiveStrategy strategy_a(space_a), strategy_b(space_b);
  std::vector<std::string> lines_b;  // the status line while B is measured (the last update: B's)
  ReplayEvaluator evaluator(test::landscape, [&] {
    auto const line = progress.status_line(Progress::Clock::now());
    if (line.starts_with("B: ")) lines_b.push_back(line);
  });
  ProblemTuning a(*s.family, problem_a, strategy_a, space_a, evaluator, store, &progress);
  ProblemTuning b(*s.family, problem_b, strategy_b, space_b, evaluator, store, &progress);
  a.set_progress_prefix("A");
  b.set_progress_prefix("B");

  auto limits = [](std::optional<int> budget, std::vector<device::Config> first) {
    TuneLimits l;
    l.budget = budget;
    l.first = std::move(first);
    return l;
  };
  a.evaluate_first(limits({}, {s.family->default_config(problem_a)}));
  b.evaluate_first(limits({}, {s.family->default_config(problem_b)}));
  a.search(limits({}, {}));  // the whole space: it holds A's optimum
  b.search(limits(6, {}));
  auto const outcome_a = a.finish({});
  auto const outcome_b = b.finish({});
  std::fclose(sink);

  auto const best_text = [](TuneOutcome const& o) {
    return o.best_config_text() + " " + std::to_string(int(o.best_tflops())) + " TFLOP/s";
  };
  // A's best came in its search, after B's default: the last best any problem found before B searched.
  REQUIRE(outcome_a.best_row);
  REQUIRE(outcome_b.best_row);
  REQUIRE(outcome_a.best_config_text() != device::to_string(s.family->default_config(problem_a)));
  REQUIRE(outcome_b.best_config_text() == device::to_string(s.family->default_config(problem_b)));
  auto const best_a = best_text(outcome_a), best_b = best_text(outcome_b);
  REQUIRE(best_a != best_b);
  REQUIRE(lines_b.size() >= 4);
  for (auto const& line : lines_b) {
    INFO(line);
    CHECK(line.find(best_a) == std::string::npos);
    CHECK(line.ends_with("best: " + best_b));
  }
}
