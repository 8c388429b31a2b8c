// Exhaustive search: every valid point once, in lexicographic order. The baseline the other strategies
// are judged against (it finds exactly the optimum of a recorded table, by construction).
#include "tuner/strategy/strategies.hpp"

namespace fl::tuner {

ExhaustiveStrategy::ExhaustiveStrategy(ParameterSpace const& space) : points_(space.valid_points()) {}

std::optional<PointIndex> ExhaustiveStrategy::next() {
  if (cursor_ >= points_.size()) return std::nullopt;
  return points_[cursor_++];
}

void ExhaustiveStrategy::report(PointIndex const&, std::optional<double>) {}

}  // namespace fl::tuner
