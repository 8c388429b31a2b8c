// Strategies against a REAL tuning run: fa2_sm80, bf16, d 128, n 4096, non-causal, headline shape
// (b4 h16), every config of the space measured on the H200 by `scripts/gpu.sh fixture` and committed
// as tests/tuner/data/fa2_sm80_h200_bf16_d128_n4096_full.tsv (fa-tune --export-measurements).
//
// Until that file is committed this test is skipped with a message that says so (no synthetic stand-in:
// the point is the real landscape, with its plateaus, its spills and its timing noise).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "device/families/registry.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/strategy/simulation.hpp"
#include "tuner/strategy/strategies.hpp"

using namespace fl::device;
using namespace fl::tuner;

namespace {

constexpr char const* kFixture = "fa2_sm80_h200_bf16_d128_n4096_full.tsv";
constexpr char const* kProblem = "b4 h16/16 n4096x4096 d128 bf16 full fwd";
constexpr int kSkipExitCode = 77;  // CTest's SKIP_RETURN_CODE (tests/CMakeLists.txt)
constexpr int kSeeds = 20;
constexpr int kSeedsRequired = 18;       // >= 90% of the seeds
constexpr double kSpeedFraction = 0.95;  // "95% of the optimum's speed": optimum / found >= 0.95
constexpr double kBudgetFraction = 0.30;

// config -> median ms (nullopt: rejected), for the fixture's rows of kProblem.
std::map<std::string, std::optional<double>> read_fixture(std::filesystem::path const& path) {
  std::map<std::string, std::optional<double>> costs;
  std::ifstream in(path);
  bool header = false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string field; std::getline(ss, field, '\t');) f.push_back(field);
    if (!header) {
      header = true;
      REQUIRE(f.size() >= 5);
      REQUIRE(f[2] == "config");
      REQUIRE(f[4] == "median_ms");
      continue;
    }
    REQUIRE(f.size() >= 5);
    if (f[0] != "fa2_sm80" || f[1] != kProblem) continue;
    costs[f[2]] = f[3] == "ok" ? std::optional<double>(std::stod(f[4])) : std::nullopt;
  }
  return costs;
}

}  // namespace

TEST_CASE("strategies on the recorded H200 run: exhaustive finds the optimum, random and anneal reach 95%",
          "[tuner][strategy]") {
  auto const path = std::filesystem::path(FA_TEST_DATA_DIR) / kFixture;
  if (!std::filesystem::exists(path)) {
    std::string const why = "skipped: the recorded H200 fixture " + path.string() +
                            " is not committed yet (the lead records it with scripts/gpu.sh fixture)";
    // Run alone (as CTest runs every test case), exit with CTest's skip code so it shows as skipped, not
    // passed; inside a run of many tests, say so and go on.
    auto const config = Catch::getCurrentContext().getConfig();
    if (Catch::filterTests(Catch::getAllTestCasesSorted(*config), config->testSpec(), *config).size() == 1) {
      std::printf("%s\n", why.c_str());
      std::fflush(stdout);
      std::_Exit(kSkipExitCode);
    }
    WARN(why);
    return;
  }
  auto const costs = read_fixture(path);
  REQUIRE_FALSE(costs.empty());
  auto family = find_family("fa2_sm80");
  auto const problem = headline_problem(4096, 128, false, fl::common::Precision::bf16, Direction::forward);
  auto const space = family_space(*family, problem);
  auto const points = space.valid_points();
  // The recording must cover today's space; a space changed since needs a new recording.
  for (auto const& p : points) {
    INFO("config " << to_string(space.config_of(p)) << " is not in the recording: record the fixture again");
    REQUIRE(costs.contains(to_string(space.config_of(p))));
  }
  RecordedCost const cost = [&](Config const& c) { return costs.at(to_string(c)); };

  std::optional<double> optimum;
  std::string optimum_config;
  int near_optimal = 0;
  for (auto const& p : points)
    if (auto ms = cost(space.config_of(p)); ms && (!optimum || *ms < *optimum)) {
      optimum = ms;
      optimum_config = to_string(space.config_of(p));
    }
  REQUIRE(optimum);
  for (auto const& p : points)
    if (auto ms = cost(space.config_of(p)); ms && *optimum / *ms >= kSpeedFraction) ++near_optimal;

  ExhaustiveStrategy exhaustive(space);
  auto const full = simulate(exhaustive, space, cost, points.size());
  REQUIRE(full.best_cost);
  CHECK(*full.best_cost == *optimum);
  CHECK(to_string(full.best_config) == optimum_config);

  auto const budget = std::size_t(std::ceil(kBudgetFraction * double(points.size())));
  for (auto kind : {StrategyKind::random, StrategyKind::anneal, StrategyKind::bayes}) {
    int reached = 0;
    for (int seed = 1; seed <= kSeeds; ++seed) {
      auto strategy = make_strategy(kind, space, std::uint64_t(seed));
      auto const result = simulate(*strategy, space, cost, budget);
      if (result.best_cost && *optimum / *result.best_cost >= kSpeedFraction) ++reached;
    }
    INFO(name(kind) << " reached 95% of the optimum within " << budget << " of " << points.size()
                    << " evaluations in " << reached << " of " << kSeeds << " seeds (" << near_optimal
                    << " configs are within 95%)");
    // Held for random and anneal (issue 6 item 8); bayes is reported, not held.
    if (kind != StrategyKind::bayes) CHECK(reached >= kSeedsRequired);
  }
}

namespace {

// The gap to exhaustive of one strategy at one budget over kSeeds seeds, as fa-tune runs it: the
// family's default first (counted in the budget), then the strategy's proposals.
struct Gap {
  double median_speed = 0;  // median over the seeds of optimum / found (1 = found the optimum)
  double worst_speed = 0;
  int within_1pc = 0, within_3pc = 0;  // seeds whose best is within 1% / 3% of the optimum's speed
};

constexpr double kGridBudgetFractions[] = {0.10, 0.20, 0.30, 0.50};

Gap gap_of(StrategyKind kind, ParameterSpace const& space, RecordedCost const& cost,
           std::vector<Config> const& first, double optimum, std::size_t budget) {
  std::vector<double> speeds;
  Gap gap;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    auto strategy = make_strategy(kind, space, std::uint64_t(seed));
    auto const result = simulate(*strategy, space, cost, budget, first);
    double const speed = result.best_cost ? optimum / *result.best_cost : 0.0;
    speeds.push_back(speed);
    gap.within_1pc += speed >= 0.99;
    gap.within_3pc += speed >= 0.97;
  }
  std::sort(speeds.begin(), speeds.end());
  gap.median_speed = speeds[speeds.size() / 2];
  gap.worst_speed = speeds.front();
  return gap;
}

struct FixtureSpace {
  std::map<std::string, std::optional<double>> costs;
  std::unique_ptr<Family> family;  // the space's rules refer to it
  ParameterSpace space;
  Config fallback;
  double optimum = 0;
};

std::optional<FixtureSpace> fixture_space() {
  auto const path = std::filesystem::path(FA_TEST_DATA_DIR) / kFixture;
  if (!std::filesystem::exists(path)) return std::nullopt;
  auto family = find_family("fa2_sm80");
  auto const problem = headline_problem(4096, 128, false, fl::common::Precision::bf16, Direction::forward);
  auto space = family_space(*family, problem);
  auto fallback = family->default_config(problem);
  FixtureSpace f{read_fixture(path), std::move(family), std::move(space), std::move(fallback), 0};
  for (auto const& [config, ms] : f.costs)
    if (ms && (f.optimum == 0 || *ms < f.optimum)) f.optimum = *ms;
  return f;
}

}  // namespace

// The figures experiments/tuner/README.md quotes for the grid's strategy and budgets (run it to see them:
// build/bin/test_tuner "[gap]").
TEST_CASE("the gap to exhaustive per strategy and budget on the recorded H200 run (table)", "[.][gap]") {
  auto f = fixture_space();
  REQUIRE(f);
  RecordedCost const cost = [&](Config const& c) { return f->costs.at(to_string(c)); };
  auto const size = f->space.valid_points().size();
  std::printf(
      "fa2_sm80 bf16 d128 n4096 full on the H200: %zu valid configs, %d seeds; the default is %.4f of "
      "the optimum's speed\n",
      size, kSeeds, f->optimum / *f->costs.at(to_string(f->fallback)));
  std::printf("strategy  budget     default first  median  worst   seeds>=99%%  seeds>=97%%\n");
  for (double fraction : kGridBudgetFractions)
    for (bool default_first : {true, false})
      for (auto kind : {StrategyKind::random, StrategyKind::anneal, StrategyKind::bayes}) {
        auto const budget = std::size_t(std::ceil(fraction * double(size)));
        auto const first = default_first ? std::vector<Config>{f->fallback} : std::vector<Config>{};
        auto const g = gap_of(kind, f->space, cost, first, f->optimum, budget);
        std::printf("%-8s  %3zu (%2.0f%%)  %-13s  %.4f  %.4f  %2d/%d       %2d/%d\n",
                    std::string(name(kind)).c_str(), budget, 100 * fraction, default_first ? "yes" : "no",
                    g.median_speed, g.worst_speed, g.within_1pc, kSeeds, g.within_3pc, kSeeds);
      }
}

// The grid's choice (experiments/tuner/grids): bayes after the default. On the recording it finds the
// exact optimum (one step from the default) within 10% of the space; without the default first it does not
// (median 0.958 at 10%: the table above), which is why the default and --warm-start's configs go first.
TEST_CASE("bayes after the default finds the recorded optimum within 10% of the space", "[tuner][strategy]") {
  auto f = fixture_space();
  if (!f) {
    WARN("skipped: the recorded H200 fixture is not committed");
    return;
  }
  RecordedCost const cost = [&](Config const& c) { return f->costs.at(to_string(c)); };
  auto const budget = std::size_t(std::ceil(0.10 * double(f->space.valid_points().size())));
  auto const after_default = gap_of(StrategyKind::bayes, f->space, cost, {f->fallback}, f->optimum, budget);
  CHECK(after_default.within_1pc >= kSeedsRequired);
  auto const alone = gap_of(StrategyKind::bayes, f->space, cost, {}, f->optimum, budget);
  CHECK(alone.median_speed < after_default.median_speed);
}
