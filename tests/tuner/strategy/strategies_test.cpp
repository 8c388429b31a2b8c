#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "tuner/strategy/simulation.hpp"
#include "tuner/strategy/strategies.hpp"

using namespace fl::device;
using namespace fl::tuner;

namespace {

// A landscape shaped like a tile-size space: a smooth bowl in log2 block sizes with a plateau of
// near-optimal configs, stage count mattering little, and an invalid corner (too much shared memory).
ParameterSpace tile_space() {
  return ParameterSpace(
      {{"kBlockM", {16, 32, 64, 128, 256}},
       {"kBlockN", {16, 32, 64, 128, 256}},
       {"kNWarps", {1, 2, 4, 8}},
       {"kStages", {1, 2, 3, 4}}},
      [](Config const& c) { return c.at("kBlockM") * c.at("kBlockN") * c.at("kStages") <= 128 * 128 * 2; });
}

std::optional<double> tile_cost(Config const& c) {
  if (c.at("kNWarps") * 16 > c.at("kBlockM")) return std::nullopt;  // "failed to compile"
  double const m = std::log2(double(c.at("kBlockM"))) - 7.0;
  double const n = std::log2(double(c.at("kBlockN"))) - 6.0;
  double const w = std::log2(double(c.at("kNWarps"))) - 2.0;
  double const s = double(c.at("kStages")) - 2.0;
  return 1.0 + 0.3 * m * m + 0.2 * n * n + 0.15 * w * w + 0.02 * s * s + 0.05 * m * n;
}

double optimum(ParameterSpace const& space) {
  double best = INFINITY;
  for (auto const& p : space.valid_points())
    if (auto c = tile_cost(space.config_of(p))) best = std::min(best, *c);
  return best;
}

}  // namespace

TEST_CASE("parameter space enumerates exactly the valid points", "[tuner][strategy]") {
  auto const space = tile_space();
  CHECK(space.total_points() == 5 * 5 * 4 * 4);
  auto const points = space.valid_points();
  std::set<PointIndex> unique(points.begin(), points.end());
  CHECK(unique.size() == points.size());
  for (auto const& p : points) CHECK(space.is_valid(p));
  CHECK(points.size() < space.total_points());  // the shared-memory constraint removed some
}

TEST_CASE("every strategy proposes each valid point at most once and eventually all", "[tuner][strategy]") {
  auto const space = tile_space();
  auto const valid = space.valid_points();
  for (auto kind :
       {StrategyKind::exhaustive, StrategyKind::random, StrategyKind::anneal, StrategyKind::bayes}) {
    auto strategy = make_strategy(kind, space, 7);
    std::set<PointIndex> seen;
    while (auto p = strategy->next()) {
      INFO(name(kind));
      REQUIRE(space.is_valid(*p));
      REQUIRE(seen.insert(*p).second);
      strategy->report(*p, tile_cost(space.config_of(*p)));
    }
    CHECK(seen.size() == valid.size());
  }
}

TEST_CASE("exhaustive finds the exact optimum", "[tuner][strategy]") {
  auto const space = tile_space();
  ExhaustiveStrategy strategy(space);
  auto const result = simulate(strategy, space, tile_cost, 100000);
  REQUIRE(result.best_cost);
  CHECK(*result.best_cost == optimum(space));
}

// On this synthetic bowl (one sharp optimum) random search reaches 95% in only about half the seeds, so
// only the guided strategies are held to the 95%-in-30% bar here; the recorded H200 fixture holds all.
TEST_CASE("guided strategies reach 95% of the optimum within 30% of the evaluations", "[tuner][strategy]") {
  auto const space = tile_space();
  double const best = optimum(space);
  auto const budget = space.valid_points().size() * 3 / 10;
  for (auto kind : {StrategyKind::anneal, StrategyKind::bayes}) {
    int reached = 0;
    constexpr int kSeeds = 20;
    for (int seed = 0; seed < kSeeds; ++seed) {
      auto strategy = make_strategy(kind, space, std::uint64_t(seed));
      auto const result = simulate(*strategy, space, tile_cost, budget);
      // "95% of the optimum" in speed: best / found >= 0.95.
      if (result.best_cost && best / *result.best_cost >= 0.95) ++reached;
    }
    INFO(name(kind) << " reached 95% in " << reached << " of " << kSeeds << " seeds");
    CHECK(reached >= kSeeds * 9 / 10);
  }
}

TEST_CASE("gaussian process interpolates its observations", "[tuner][strategy]") {
  GaussianProcess gp(0.4, 1e-6);
  gp.fit({{0.0}, {0.5}, {1.0}}, {1.0, 3.0, 2.0});
  double mean = 0, sd = 0;
  gp.predict({0.5}, mean, sd);
  CHECK(mean == Approx(3.0).margin(1e-3));
  CHECK(sd < 0.01);
  gp.predict({0.25}, mean, sd);
  CHECK(sd > 0.01);
  CHECK(expected_improvement(1.0, 0.0, 2.0) == Approx(1.0));
  CHECK(expected_improvement(3.0, 0.0, 2.0) == 0.0);
}

TEST_CASE("exhaustive and random announce exactly their next proposals", "[tuner][strategy]") {
  auto const space = tile_space();
  for (auto kind : {StrategyKind::exhaustive, StrategyKind::random}) {
    auto strategy = make_strategy(kind, space, 5);
    REQUIRE(strategy->next());
    auto const ahead = strategy->upcoming(6);
    REQUIRE(ahead.size() == 6);
    for (auto const& expected : ahead) {
      auto const p = strategy->next();
      REQUIRE(p);
      CHECK(*p == expected);
    }
  }
}

// Annealing's next proposal is a neighbour of the current point or of the one being measured, or the restart
// point it drew ahead: its announced set holds it, except when that restart point was visited meanwhile.
TEST_CASE("annealing announces its next proposal among the neighbours it offers", "[tuner][strategy]") {
  auto const space = tile_space();
  auto const budget = space.valid_points().size() / 2;
  AnnealingStrategy strategy(space, 11);
  int announced = 0, proposals = 0;
  auto point = strategy.next();
  for (std::size_t i = 0; i < budget && point; ++i) {
    auto const ahead = strategy.upcoming(64);
    strategy.report(*point, tile_cost(space.config_of(*point)));
    point = strategy.next();
    if (!point) break;
    ++proposals;
    if (std::find(ahead.begin(), ahead.end(), *point) != ahead.end()) ++announced;
  }
  INFO(announced << " of " << proposals << " proposals were announced");
  CHECK(announced >= proposals * 9 / 10);
}

TEST_CASE("bayes announces its random start exactly", "[tuner][strategy]") {
  auto const space = tile_space();
  BayesStrategy strategy(space, 2);
  auto const first = strategy.next();
  REQUIRE(first);
  auto const ahead = strategy.upcoming(3);
  REQUIRE(ahead.size() == 3);
  strategy.report(*first, tile_cost(space.config_of(*first)));
  for (auto const& expected : ahead) {
    auto const p = strategy.next();
    REQUIRE(p);
    CHECK(*p == expected);
    strategy.report(*p, tile_cost(space.config_of(*p)));
  }
}

TEST_CASE("a config maps back to its point, and an invalid one to none", "[tuner][strategy]") {
  auto const space = tile_space();
  for (auto const& p : space.valid_points()) CHECK(space.point_of(space.config_of(p)) == p);
  CHECK_FALSE(space.point_of(Config{{"kBlockM", 256}, {"kBlockN", 256}, {"kNWarps", 1}, {"kStages", 4}}));
  CHECK_FALSE(space.point_of(Config{{"kBlockM", 100}, {"kBlockN", 16}, {"kNWarps", 1}, {"kStages", 1}}));
  CHECK_FALSE(space.point_of(Config{{"kBlockM", 16}}));
}
