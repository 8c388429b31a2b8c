// Exhaustive search: every valid point once, in lexicographic order. The baseline the other strategies
// are judged against (it finds exactly the optimum of a recorded table, by construction).
#include <algorithm>

#include "tuner/strategy/strategies.hpp"

namespace fl::tuner {

ExhaustiveStrategy::ExhaustiveStrategy(ParameterSpace const& space) : points_(space.valid_points()) {}

std::optional<PointIndex> ExhaustiveStrategy::next() {
  if (cursor_ >= points_.size()) return std::nullopt;
  return points_[cursor_++];
}

void ExhaustiveStrategy::report(PointIndex const&, std::optional<double>) {}

std::vector<PointIndex> ExhaustiveStrategy::upcoming(std::size_t n) const {
  auto const end = cursor_ + std::min(n, points_.size() - cursor_);
  return {points_.begin() + std::ptrdiff_t(cursor_), points_.begin() + std::ptrdiff_t(end)};
}

}  // namespace fl::tuner
