// A rerun starts from every measurement stored for its problem (ProblemTuning::resume, tune/stored_rows.hpp):
// whatever the strategy and the first configs propose this time, nothing stored is measured again and the
// budget counts the stored rows. Before, a rerun replayed the strategy and measured what it proposed that
// was not stored: with --warm-start's first configs moved by a grid line's progress, a whole new budget
// (2026-12-04, experiments/tuner/raw/2026-12-04-grid-180252Z: 180 configs more in 248 s of the H200).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "tests/tuner/tune/tune_loop_fixture.hpp"
#include "tuner/tune/shard.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using fl::test::landscape;
using fl::test::Setup;

namespace {

struct Tuned {
  TuneOutcome outcome;
  int evaluations = 0;  // the evaluator's calls
};

// Bayes as fa-tune runs it: the first configs, then the strategy's proposals, under `budget`.
Tuned tune(Setup& s, ParameterSpace const& space, std::uint64_t seed, std::vector<Config> first, int budget) {
  auto database = db::open_database(s.db_path);
  TuneStore const store{&database, s.gpu, "13.0", std::string(64, 'a')};
  auto strategy = make_strategy(StrategyKind::bayes, space, seed);
  Tuned tuned;
  ReplayEvaluator evaluator(landscape, [&] { ++tuned.evaluations; });
  TuneLimits limits;
  limits.first = std::move(first);
  limits.budget = budget;
  tuned.outcome = tune_problem(*s.family, s.problem, *strategy, space, evaluator, store, limits);
  return tuned;
}

// A valid config of `space` that `rows` do not hold: a warm start the first run never tried.
Config not_in(ParameterSpace const& space, std::vector<std::pair<std::string, db::Measurement>> const& rows) {
  std::set<std::string> taken;
  for (auto const& [config, m] : rows) taken.insert(config);
  for (auto const& point : space.valid_points())
    if (!taken.contains(to_string(space.config_of(point)))) return space.config_of(point);
  FAIL("every config was tried");
  return {};
}

}  // namespace

TEST_CASE("a rerun whose budget was spent measures nothing, whatever it would try first now",
          "[tuner][tune]") {
  Setup s;
  auto const space = family_space(*s.family, s.problem);
  auto const fallback = s.family->default_config(s.problem);
  constexpr int kBudget = 12;
  auto const first = tune(s, space, 1, {fallback}, kBudget);
  REQUIRE(first.outcome.evaluated == kBudget);
  REQUIRE(s.stored_rows() == kBudget);

  // Another warm start and another seed: the strategy proposes other configs than the run that spent the
  // budget, and every stored row is answered before any of them.
  auto const again = tune(s, space, 7, {fallback, not_in(space, first.outcome.rows)}, kBudget);
  CHECK(again.evaluations == 0);
  CHECK(again.outcome.evaluated == 0);
  CHECK(again.outcome.resumed == kBudget);
  CHECK(again.outcome.end == SearchEnd::budget);
  REQUIRE(first.outcome.best_row);
  REQUIRE(again.outcome.best_row);
  CHECK(again.outcome.best_config_text() == first.outcome.best_config_text());
  db::Measurement const& first_best = first.outcome.best_measurement();
  CHECK(again.outcome.best_measurement().median_ms == first_best.median_ms);
  CHECK(s.stored_rows() == kBudget);
  // The rows in the order they were measured: what the strategy heard, and the best-so-far curve.
  REQUIRE(again.outcome.rows.size() == first.outcome.rows.size());
  for (std::size_t i = 0; i < first.outcome.rows.size(); ++i)
    CHECK(again.outcome.rows[i].first == first.outcome.rows[i].first);
  // The best config stored again keeps the time it was measured, not the rerun's (db/README.md).
  REQUIRE_FALSE(first_best.measured_at.empty());
  CHECK(again.outcome.best_measurement().measured_at == first_best.measured_at);
  auto database = db::open_database(s.db_path);
  auto const best = db::best_configs(database);
  REQUIRE(best.size() == 1);
  CHECK(best[0].recorded_at == first_best.measured_at);
}

TEST_CASE("a rerun after half the budget measures only the rest, and hears every stored row",
          "[tuner][tune]") {
  Setup s;
  auto const space = family_space(*s.family, s.problem);
  auto const fallback = s.family->default_config(s.problem);
  auto const half = tune(s, space, 1, {fallback}, 6);
  REQUIRE(half.outcome.evaluated == 6);

  auto const warm = not_in(space, half.outcome.rows);
  auto const rest = tune(s, space, 7, {fallback, warm}, 12);
  CHECK(rest.evaluations == 6);
  CHECK(rest.outcome.evaluated == 6);
  CHECK(rest.outcome.resumed == 6);
  CHECK(s.stored_rows() == 12);
  // The new warm start is measured first after the stored rows; no stored config is proposed again.
  REQUIRE(rest.outcome.rows.size() == 12);
  CHECK(rest.outcome.rows[6].first == to_string(warm));
  std::set<std::string> configs;
  for (auto const& [config, m] : rest.outcome.rows) configs.insert(config);
  CHECK(configs.size() == 12);
  REQUIRE(rest.outcome.best_row);
  REQUIRE(half.outcome.best_row);
  CHECK(rest.outcome.best_median_ms() <= half.outcome.best_median_ms());
}

TEST_CASE("a worker with the candidates split resumes only its own candidates", "[tuner][tune]") {
  Setup s;
  auto const space = family_space(*s.family, s.problem);
  auto const total = int(space.valid_points().size());
  REQUIRE(tune(s, space, 1, {}, total).outcome.evaluated == total);

  auto const mine = candidates_of(space, Shard{1, 2});  // every second config, from the second
  auto const own = int(mine.valid_points().size());
  auto const resumed = tune(s, mine, 1, {}, total);
  CHECK(resumed.evaluations == 0);
  CHECK(resumed.outcome.resumed == own);
  CHECK(resumed.outcome.end == SearchEnd::exhausted);
  for (auto const& [config, m] : resumed.outcome.rows) CHECK(mine.point_of(*parse_config(config)));
}

// Each timed row stores how it was timed (schema v9); a rerun reuses only rows timed as fa-tune times now
// (tuning_protocol.hpp), so changing the protocol re-times the stored rows instead of ranking a settled
// timing against a boost-clock one.
TEST_CASE("a rerun measures again the rows timed with another protocol, and only those", "[tuner][tune]") {
  Setup s;
  auto const first = s.run();
  REQUIRE(first.evaluated > 2);
  auto const rows = [&s] {
    auto database = db::open_database(s.db_path);
    std::vector<std::optional<db::TimingProtocol>> protocols;
    auto select = database.prepare("SELECT warmup_runs, settle_ms FROM measurements ORDER BY measurement_id");
    while (select.step())
      protocols.push_back(
          select.column_optional_int64(0)
              ? std::optional(db::TimingProtocol{int(select.column_int64(0)), int(select.column_int64(1))})
              : std::nullopt);
    return protocols;
  };
  auto const stored = rows();
  REQUIRE(stored.size() == std::size_t(first.evaluated));
  CHECK(std::ranges::all_of(stored, [](auto const& p) { return p == kTuningProtocol; }));
  {
    auto database = db::open_database(s.db_path);
    database.execute("UPDATE measurements SET settle_ms = 200 WHERE measurement_id IN (1, 3)");
  }
  int evaluations = 0;
  auto const again = s.run([&] { ++evaluations; });
  CHECK(evaluations == 2);
  CHECK(again.evaluated == 2);
  CHECK(again.resumed == first.evaluated - 2);
  CHECK(rows() == stored);  // the two were stored again, timed as fa-tune times
  CHECK(s.run().evaluated == 0);
}
