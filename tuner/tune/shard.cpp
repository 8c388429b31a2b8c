#include "tuner/tune/shard.hpp"

#include <set>
#include <string>

namespace fl::tuner {

ShardMode shard_mode(std::optional<Shard> shard, std::size_t pairs, bool fixed_order) {
  if (!shard || shard->count <= 1) return ShardMode::whole;
  if (pairs >= std::size_t(shard->count) || !fixed_order) return ShardMode::pairs;
  return ShardMode::candidates;
}

bool takes_pair(Shard shard, std::size_t pair_index) {
  return pair_index % std::size_t(shard.count) == std::size_t(shard.index);
}

ParameterSpace candidates_of(ParameterSpace const& space, Shard shard) {
  auto const points = space.valid_points();
  std::set<std::string> mine;
  for (std::size_t i = std::size_t(shard.index); i < points.size(); i += std::size_t(shard.count))
    mine.insert(device::to_string(space.config_of(points[i])));
  return ParameterSpace(space.parameters(), [mine = std::move(mine)](device::Config const& config) {
    return mine.contains(device::to_string(config));
  });
}

std::optional<int> worker_budget(std::optional<int> budget, ShardMode mode, Shard shard,
                                 std::size_t pairs_total, std::size_t pairs_taken) {
  if (!budget || mode == ShardMode::whole) return budget;
  std::size_t const parts = mode == ShardMode::candidates ? std::size_t(shard.count) : pairs_total;
  std::size_t const mine = mode == ShardMode::candidates ? 1 : pairs_taken;
  return int((std::size_t(*budget) * mine + parts - 1) / parts);  // rounded up: no pair loses its last one
}

}  // namespace fl::tuner
