// Random search: the valid points in a seeded random order, without replacement. Cheap and, on spaces
// where many configs are near the optimum (the usual case for tile sizes), hard to beat per evaluation.
#include <algorithm>
#include <random>

#include "tuner/strategy/strategies.hpp"

namespace fl::tuner {

RandomStrategy::RandomStrategy(ParameterSpace const& space, std::uint64_t seed)
    : points_(space.valid_points()) {
  std::mt19937_64 rng(seed);
  std::shuffle(points_.begin(), points_.end(), rng);
}

std::optional<PointIndex> RandomStrategy::next() {
  if (cursor_ >= points_.size()) return std::nullopt;
  return points_[cursor_++];
}

void RandomStrategy::report(PointIndex const&, std::optional<double>) {}

std::vector<PointIndex> RandomStrategy::upcoming(std::size_t n) const {
  auto const end = cursor_ + std::min(n, points_.size() - cursor_);
  return {points_.begin() + std::ptrdiff_t(cursor_), points_.begin() + std::ptrdiff_t(end)};
}

}  // namespace fl::tuner
