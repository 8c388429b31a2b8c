#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>

#include "db/schema.hpp"
#include "db/seed_configs.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tuner/families/registry.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/strategy/strategies.hpp"
#include "tuner/tune/replay_evaluator.hpp"
#include "tuner/tune/tune_loop.hpp"

using namespace fl;
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
  Problem problem = headline_problem(4096, 128, false, numerics::Precision::bf16, Direction::forward);
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
