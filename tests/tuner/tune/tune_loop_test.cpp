#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "db/schema.hpp"
#include "db/seed_configs.hpp"
#include "db/tuning_runs.hpp"
#include "device/families/registry.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/strategy/strategies.hpp"
#include "tuner/tune/db_rows.hpp"
#include "tuner/tune/replay_evaluator.hpp"
#include "tuner/tune/tune_loop.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;

namespace {

// A recorded-looking landscape over fa2_sm80's real space: time grows away from kBlockM=128, kBlockN=64.
std::optional<double> landscape(Config const& c) {
  double const m = std::log2(double(c.at("kBlockM"))) - 7.0;
  double const n = std::log2(double(c.at("kBlockN"))) - 6.0;
  return 1.0 + 0.2 * m * m + 0.1 * n * n + 0.01 * c.at("kStages") + 0.001 * value_or(c, "kWarpsN", 1);
}

struct Setup {
  test::TempKernelsDir dir;
  std::filesystem::path db_path = dir.path() / "tune.sqlite";
  std::unique_ptr<Family> family = find_family("fa2_sm80");
  Problem problem = headline_problem(4096, 128, false, common::Precision::bf16, Direction::forward);
  db::GpuKey gpu{"Replay GPU", 9, 0, 132, "13000"};

  TuneOutcome run(std::function<void()> on_evaluate = {}) {
    auto database = db::open_database(db_path);
    TuneStore const store{&database, gpu, "13.0", std::string(64, 'a')};
    auto const space = family_space(*family, problem);
    ExhaustiveStrategy strategy(space);
    ReplayEvaluator evaluator(landscape, std::move(on_evaluate));
    return tune_problem(*family, problem, strategy, space, evaluator, store, {});
  }
  std::int64_t stored_rows() {
    auto database = db::open_database(db_path);
    auto count = database.prepare("SELECT count(*) FROM measurements");
    count.step();
    return count.column_int64(0);
  }
};

}  // namespace

TEST_CASE("tuning stores every measurement, and a rerun measures nothing and finds the same best",
          "[tuner][tune]") {
  Setup s;
  auto const total = int(family_space(*s.family, s.problem).valid_points().size());
  auto const first = s.run();
  CHECK(first.evaluated == total);
  CHECK(first.resumed == 0);
  REQUIRE(first.best);
  CHECK(first.best->at("kBlockM") == 128);
  CHECK(first.best->at("kBlockN") == 64);
  CHECK(s.stored_rows() == total);

  auto const second = s.run([] { FAIL("a rerun must not evaluate anything"); });
  CHECK(second.evaluated == 0);
  CHECK(second.resumed == total);
  CHECK(*second.best == *first.best);

  auto database = db::open_database(s.db_path);
  auto const best = db::best_configs(database, "Replay GPU");
  REQUIRE(best.size() == 1);
  CHECK(best[0].config == to_string(*first.best));
  CHECK(best[0].source == "measured");
}

TEST_CASE("a tuning run killed with SIGKILL loses no finished measurement and resumes where it stopped",
          "[tuner][tune]") {
  Setup s;
  auto const total = int(family_space(*s.family, s.problem).valid_points().size());
  constexpr int kFinishedBeforeKill = 7;
  REQUIRE(total > kFinishedBeforeKill);
  s.run({});  // create the schema first, then start from an empty table
  {
    auto database = db::open_database(s.db_path);
    database.execute("DELETE FROM measurements; DELETE FROM best_configs;");
  }

  pid_t const child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int evaluations = 0;
    // The 8th evaluation never finishes: the process dies as kill -9 would kill it.
    s.run([&] {
      if (++evaluations > kFinishedBeforeKill) raise(SIGKILL);
    });
    _exit(0);  // not reached
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  CHECK(s.stored_rows() == kFinishedBeforeKill);
  int evaluated_after = 0;
  auto const resumed = s.run([&] { ++evaluated_after; });
  CHECK(resumed.resumed == kFinishedBeforeKill);
  CHECK(resumed.evaluated == total - kFinishedBeforeKill);
  CHECK(evaluated_after == total - kFinishedBeforeKill);
  CHECK(s.stored_rows() == total);
  REQUIRE(resumed.best);
  CHECK(resumed.best->at("kBlockM") == 128);
}

TEST_CASE("seed configs round-trip through their TSV form and never overwrite a measured row",
          "[tuner][tune]") {
  Setup s;
  db::BestConfig seed{
      s.gpu, problem_key(s.problem),    "fa2_sm80", "kBlockM=64,kBlockN=64", 1.5, 300.0, "seed", "13.0",
      "",    "2026-11-29T00:00:00.000Z"};
  auto const text = db::format_seed_configs({seed});
  auto const parsed = db::parse_seed_configs(text);
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0].config == seed.config);
  CHECK(parsed[0].problem.head_dim == 128);
  CHECK(parsed[0].gpu.cc_major == 9);
  CHECK_THROWS_AS(db::parse_seed_configs("not a header\n"), std::invalid_argument);

  s.run();  // measures, stores a 'measured' best
  auto database = db::open_database(s.db_path);
  CHECK(db::load_seed_configs(database, parsed) == 0);  // the measured row wins
  auto const best = db::best_configs(database, "Replay GPU");
  REQUIRE(best.size() == 1);
  CHECK(best[0].source == "measured");
  CHECK_NOTHROW(db::parse_seed_configs(db::shipped_seed_configs()));  // the shipped text parses
}

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

TEST_CASE("a repeat run re-measures every candidate and keeps the first answer", "[tuner][tune]") {
  Setup s;
  auto const first = s.run();
  auto database = db::open_database(s.db_path);
  auto const run_one = db::begin_tuning_run(database, "fa-tune (test)");
  auto const run_two = db::begin_tuning_run(database, "fa-tune (test)", run_one, 2);
  TuneStore const store{&database, s.gpu, "13.0", std::string(64, 'a')};
  auto const space = family_space(*s.family, s.problem);
  ExhaustiveStrategy strategy(space);
  int evaluations = 0;
  ReplayEvaluator slower(
      [](Config const& c) -> std::optional<double> {
        auto const ms = landscape(c);
        if (!ms) return std::nullopt;
        return 1.1 * *ms;
      },
      [&] { ++evaluations; });
  TuneLimits limits;
  limits.remeasure_run = run_two;
  auto const repeat = tune_problem(*s.family, s.problem, strategy, space, slower, store, limits);
  CHECK(repeat.resumed == 0);
  CHECK(evaluations == first.evaluated);
  CHECK(*repeat.best == *first.best);
  CHECK(repeat.best_stats->median_ms == Approx(1.1 * first.best_stats->median_ms));

  db::MeasurementKey key{
      s.gpu, "13.0", std::string(64, 'a'), "fa2_sm80", to_string(*first.best), problem_key(s.problem)};
  auto const stored = db::find_measurement(database, key);
  REQUIRE(stored);
  CHECK(*stored->median_ms == Approx(first.best_stats->median_ms));  // not replaced
  auto const again = db::remeasurements_of(database, key);
  REQUIRE(again.size() == 1);
  CHECK(again[0].run_id == run_two);
  CHECK(*again[0].median_ms == Approx(1.1 * first.best_stats->median_ms));
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

TEST_CASE("measurements of different FP8 recipes never share a database key", "[tuner][tune][fp8]") {
  auto p = headline_problem(2048, 128, false, fl::common::Precision::fp8_e4m3, Direction::forward);
  auto q = p;
  q.fp8.scaling = fl::common::Fp8Scaling::per_block;
  q.fp8.block_rows = 128;
  q.fp8.incoherent = true;
  CHECK(problem_key(p).dtype != problem_key(q).dtype);
  CHECK(describe(problem_from_key(problem_key(q))) == describe(q));
  CHECK(describe(problem_from_key(problem_key(p))) == describe(p));
}
