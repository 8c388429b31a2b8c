#include <catch2/catch.hpp>

#include <algorithm>

#include "db/schema.hpp"
#include "tests/tuner/tune/tune_loop_fixture.hpp"
#include "tuner/tune/db_rows.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using fl::test::landscape;
using fl::test::Setup;

namespace {

// Records what the loop asks of it: prefetch hints and evaluations, in order; answers from the landscape.
class RecordingEvaluator final : public Evaluator {
 public:
  Evaluation evaluate(Config const& config, Problem const& problem) override {
    evaluated.push_back(to_string(config));
    auto e = replay.evaluate(config, problem);
    if (lose_context_at && to_string(config) == *lose_context_at) {
      e = Evaluation{};
      e.verdict = "failed";
      e.diagnosis = "launch: cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS";
      e.context_lost = true;
    }
    return e;
  }
  void prefetch(Config const& config, Problem const&) override { prefetched.push_back(to_string(config)); }
  bool recover() override {
    ++recoveries;
    return can_recover;
  }

  ReplayEvaluator replay{landscape};
  bool can_recover = false;
  int recoveries = 0;
  std::vector<std::string> evaluated, prefetched;
  std::optional<std::string> lose_context_at;
};

}  // namespace

TEST_CASE("the loop hands the strategy's next candidates to the evaluator before it needs them",
          "[tuner][tune]") {
  Setup s;
  auto database = db::open_database(s.db_path);
  TuneStore const store{&database, s.gpu, "13.0", std::string(64, 'a')};
  auto const space = family_space(*s.family, s.problem);
  RandomStrategy strategy(space, 3);
  RecordingEvaluator evaluator;
  TuneLimits limits;
  limits.lookahead = 4;
  auto const outcome = tune_problem(*s.family, s.problem, strategy, space, evaluator, store, limits);
  CHECK(outcome.evaluated == int(space.valid_points().size()));
  // Every candidate after the first was offered ahead of its evaluation.
  for (std::size_t i = 1; i < evaluator.evaluated.size(); ++i) {
    auto const& config = evaluator.evaluated[i];
    auto const hinted = std::find(evaluator.prefetched.begin(), evaluator.prefetched.end(), config);
    INFO("candidate " << i << ": " << config);
    CHECK(hinted != evaluator.prefetched.end());
  }
}

TEST_CASE("the default is measured first, counted once, and heard by the strategy", "[tuner][tune]") {
  Setup s;
  auto database = db::open_database(s.db_path);
  TuneStore const store{&database, s.gpu, "13.0", std::string(64, 'a')};
  auto const space = family_space(*s.family, s.problem);
  auto const fallback = s.family->default_config(s.problem);
  REQUIRE(space.point_of(fallback));
  ExhaustiveStrategy strategy(space);
  RecordingEvaluator evaluator;
  TuneLimits limits;
  limits.first = {fallback};
  auto const outcome = tune_problem(*s.family, s.problem, strategy, space, evaluator, store, limits);
  REQUIRE_FALSE(evaluator.evaluated.empty());
  CHECK(evaluator.evaluated.front() == to_string(fallback));
  CHECK(std::count(evaluator.evaluated.begin(), evaluator.evaluated.end(), to_string(fallback)) == 1);
  CHECK(outcome.evaluated ==
        int(space.valid_points().size()));  // exhaustive reached it again: not re-measured
  CHECK(outcome.rows.front().first == to_string(fallback));

  // With a budget the default counts: budget 3 = the default and two proposals.
  Setup t;
  auto db2 = db::open_database(t.db_path);
  TuneStore const store2{&db2, t.gpu, "13.0", std::string(64, 'b')};
  ExhaustiveStrategy again(space);
  limits.budget = 3;
  CHECK(tune_problem(*t.family, t.problem, again, space, evaluator, store2, limits).evaluated == 3);
}

TEST_CASE("a lost GPU context stops the run after the candidate that caused it", "[tuner][tune]") {
  Setup s;
  auto database = db::open_database(s.db_path);
  TuneStore const store{&database, s.gpu, "13.0", std::string(64, 'a')};
  auto const space = family_space(*s.family, s.problem);
  ExhaustiveStrategy strategy(space);
  RecordingEvaluator evaluator;
  evaluator.lose_context_at = to_string(space.config_of(space.valid_points().at(4)));
  auto const outcome = tune_problem(*s.family, s.problem, strategy, space, evaluator, store, {});
  CHECK(outcome.evaluated == 5);
  REQUIRE(outcome.context_lost);
  CHECK_THAT(*outcome.context_lost, Catch::Contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
  CHECK(s.stored_rows() == 5);  // the culprit is stored as failed; a rerun resumes after it
}

TEST_CASE("a GPU fault the evaluator recovers from costs only its culprit: stored as failed, the run goes on",
          "[tuner][tune]") {
  Setup s;
  auto database = db::open_database(s.db_path);
  TuneStore const store{&database, s.gpu, "13.0", std::string(64, 'a')};
  auto const space = family_space(*s.family, s.problem);
  ExhaustiveStrategy strategy(space);
  RecordingEvaluator evaluator;
  evaluator.can_recover = true;
  auto const culprit = to_string(space.config_of(space.valid_points().at(4)));
  evaluator.lose_context_at = culprit;
  auto const outcome = tune_problem(*s.family, s.problem, strategy, space, evaluator, store, {});
  CHECK(evaluator.recoveries == 1);
  CHECK_FALSE(outcome.context_lost);
  CHECK(outcome.end == SearchEnd::exhausted);
  CHECK(outcome.evaluated == int(space.valid_points().size()));
  REQUIRE(outcome.faults.size() == 1);
  CHECK_THAT(outcome.faults[0], Catch::StartsWith(culprit) && Catch::Contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
  db::MeasurementKey key{s.gpu, "13.0", std::string(64, 'a'), "fa2_sm80", culprit, problem_key(s.problem)};
  auto const stored = db::find_measurement(database, key);
  REQUIRE(stored);
  CHECK(stored->verdict == "failed");
  // Every other candidate was measured ok after the fault: no contagion.
  int ok = 0;
  for (auto const& [config, row] : outcome.rows) ok += row.verdict == "ok";
  CHECK(ok == outcome.evaluated - 1);
}
