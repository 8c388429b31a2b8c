#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/schema.hpp"
#include "db/seed_configs.hpp"
#include "db/tuning_runs.hpp"
#include "tests/tuner/tune/tune_loop_fixture.hpp"
#include "tuner/tune/db_rows.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using fl::test::landscape;
using fl::test::Setup;

TEST_CASE("tuning stores every measurement, and a rerun measures nothing and finds the same best",
          "[tuner][tune]") {
  Setup s;
  auto const total = int(family_space(*s.family, s.problem).valid_points().size());
  auto const first = s.run();
  CHECK(first.evaluated == total);
  CHECK(first.resumed == 0);
  REQUIRE(first.best_row);
  auto const first_best = parse_config(first.best_config_text());
  REQUIRE(first_best);
  CHECK(first_best->at("kBlockM") == 128);
  CHECK(first_best->at("kBlockN") == 64);
  CHECK(s.stored_rows() == total);

  auto const second = s.run([] { FAIL("a rerun must not evaluate anything"); });
  CHECK(second.evaluated == 0);
  CHECK(second.resumed == total);
  REQUIRE(second.best_row);
  CHECK(second.best_config_text() == first.best_config_text());

  auto database = db::open_database(s.db_path);
  auto const best = db::best_configs(database, "Replay GPU");
  REQUIRE(best.size() == 1);
  CHECK(best[0].config == first.best_config_text());
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
  REQUIRE(resumed.best_row);
  CHECK(parse_config(resumed.best_config_text())->at("kBlockM") == 128);
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
  REQUIRE(repeat.best_row);
  CHECK(repeat.best_config_text() == first.best_config_text());
  double const first_ms = first.best_median_ms();
  CHECK(repeat.best_median_ms() == Approx(1.1 * first_ms));

  db::MeasurementKey key{
      s.gpu, "13.0", std::string(64, 'a'), "fa2_sm80", first.best_config_text(), problem_key(s.problem)};
  auto const stored = db::find_measurement(database, key);
  REQUIRE(stored);
  CHECK(*stored->median_ms == Approx(first_ms));  // not replaced
  auto const again = db::remeasurements_of(database, key);
  REQUIRE(again.size() == 1);
  CHECK(again[0].run_id == run_two);
  CHECK(*again[0].median_ms == Approx(1.1 * first_ms));
}

TEST_CASE("a default stored as pruned is measured again, another pruned candidate is not", "[tuner][tune]") {
  Setup s;
  auto const total = int(family_space(*s.family, s.problem).valid_points().size());
  REQUIRE(s.run().evaluated == total);
  auto const default_config = to_string(s.family->default_config(s.problem));
  std::string other;
  {
    auto database = db::open_database(s.db_path);
    auto pick = database.prepare("SELECT config FROM measurements WHERE config != ? LIMIT 1");
    pick.bind_text(1, default_config);
    REQUIRE(pick.step());
    other = pick.column_text(0);
    // As the rule before SpillRule stored fa3_sm90's spilling d256 default: pruned, never timed.
    auto prune = database.prepare(
        "UPDATE measurements SET verdict = 'pruned', median_ms = NULL WHERE config IN (?, ?)");
    prune.bind_text(1, default_config).bind_text(2, other);
    prune.step();
  }
  int evaluations = 0;
  auto const rerun = s.run([&] { ++evaluations; });
  CHECK(evaluations == 1);
  CHECK(rerun.evaluated == 1);
  CHECK(rerun.resumed == total - 1);
  auto database = db::open_database(s.db_path);
  auto verdict = database.prepare("SELECT verdict FROM measurements WHERE config = ?");
  verdict.bind_text(1, default_config);
  REQUIRE(verdict.step());
  CHECK(verdict.column_text(0) == "ok");
  auto other_verdict = database.prepare("SELECT verdict FROM measurements WHERE config = ?");
  other_verdict.bind_text(1, other);
  REQUIRE(other_verdict.step());
  CHECK(other_verdict.column_text(0) == "pruned");
}
