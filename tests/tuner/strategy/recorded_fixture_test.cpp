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

#include "tuner/families/registry.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/strategy/simulation.hpp"
#include "tuner/strategy/strategies.hpp"

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
  auto const problem = headline_problem(4096, 128, false, fl::numerics::Precision::bf16, Direction::forward);
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
