// How --gpus workers split a run (tuner/tune/shard.hpp): pairs dealt in turn, or one pair's candidates
// split so that the shards cover the space exactly once; budgets that add up to the run's.
#include <catch2/catch.hpp>

#include <set>

#include "device/families/registry.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/tune/shard.hpp"

using namespace fl::device;
using namespace fl::tuner;

TEST_CASE("pairs are dealt in turn, candidates split only for a fixed order and too few pairs",
          "[tuner][tune]") {
  CHECK(shard_mode(std::nullopt, 5, true) == ShardMode::whole);
  CHECK(shard_mode(Shard{0, 1}, 5, true) == ShardMode::whole);  // --gpus 0: one worker does everything
  CHECK(shard_mode(Shard{0, 2}, 5, true) == ShardMode::pairs);
  CHECK(shard_mode(Shard{1, 4}, 1, true) == ShardMode::candidates);
  CHECK(shard_mode(Shard{1, 4}, 1, false) == ShardMode::pairs);  // bayes/anneal: a pair is never split
  CHECK(takes_pair(Shard{1, 3}, 4));
  CHECK_FALSE(takes_pair(Shard{1, 3}, 3));
}

TEST_CASE("the shards of one problem's candidates cover its space exactly once", "[tuner][tune]") {
  auto const family = find_family("fa2_sm80");
  auto const problem = headline_problem(4096, 128, false, fl::common::Precision::bf16, Direction::forward);
  auto const space = family_space(*family, problem);
  auto const all = space.valid_points();
  std::multiset<std::string> covered;
  for (int k = 0; k < 3; ++k) {
    auto const mine = candidates_of(space, Shard{k, 3});
    auto const points = mine.valid_points();
    CHECK((points.size() == all.size() / 3 || points.size() == all.size() / 3 + 1));
    for (auto const& p : points) covered.insert(to_string(mine.config_of(p)));
  }
  CHECK(covered.size() == all.size());
  CHECK(std::set<std::string>(covered.begin(), covered.end()).size() == all.size());
}

TEST_CASE("workers' budgets add up to at least the run's and a dealt pair keeps its share", "[tuner][tune]") {
  CHECK_FALSE(worker_budget(std::nullopt, ShardMode::pairs, Shard{0, 2}, 4, 2));
  CHECK(*worker_budget(12, ShardMode::whole, Shard{}, 4, 4) == 12);
  CHECK(*worker_budget(12, ShardMode::pairs, Shard{0, 2}, 4, 2) == 6);  // 3 per pair, as on one GPU
  CHECK(*worker_budget(12, ShardMode::pairs, Shard{0, 3}, 4, 2) == 6);
  CHECK(*worker_budget(12, ShardMode::pairs, Shard{2, 3}, 4, 1) == 3);
  CHECK(*worker_budget(10, ShardMode::candidates, Shard{0, 4}, 1, 1) == 3);
}
