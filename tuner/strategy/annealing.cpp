// Simulated annealing over the index lattice: a neighbour differs in one parameter by one step of its
// value list (the next block size up or down). Worse neighbours are accepted with probability
// exp(-(relative slowdown) / T), T falling geometrically, so early moves explore and late moves climb.
// Points already evaluated are never proposed twice (their cost is remembered); when every neighbour of
// the current point is spent, the walk restarts from a random unvisited point.
//
// Look-ahead for the compile pool: the next proposal is a neighbour of the current point, or of the point
// being measured (if it is accepted). Both neighbourhoods are at most 2 x 7 points for fa2_sm80, which 16
// compile workers build in one compile time, so upcoming() offers them all (current point's first: it stays
// current unless the measured point wins or is accepted uphill), and the next restart point, drawn ahead.
#include <algorithm>
#include <cmath>
#include <random>

#include "tuner/strategy/strategies.hpp"

namespace fl::tuner {

namespace {
// Relative slowdowns are the natural unit: 0.1 = 10% slower. T starts where a 10% slowdown is accepted
// with probability exp(-1) ~ 37% and falls 5% per evaluation, so after ~45 steps (T ~ 0.01) only
// improvements and ~1% slowdowns get through.
constexpr double kInitialTemperature = 0.1;
constexpr double kCooling = 0.95;
}  // namespace

AnnealingStrategy::AnnealingStrategy(ParameterSpace const& space, std::uint64_t seed)
    : space_(space), rng_(seed), temperature_(kInitialTemperature) {
  for (auto const& p : space_.valid_points()) unvisited_.insert(p);
}

std::optional<PointIndex> AnnealingStrategy::random_unvisited(std::optional<PointIndex> const& excluding) {
  std::size_t const choices = unvisited_.size() - (excluding && unvisited_.contains(*excluding) ? 1 : 0);
  if (choices == 0) return std::nullopt;
  std::uniform_int_distribution<std::size_t> pick(0, choices - 1);
  auto it = unvisited_.begin();
  for (std::size_t skip = pick(rng_);; ++it) {
    if (excluding && *it == *excluding) continue;
    if (skip-- == 0) return *it;
  }
}

std::vector<PointIndex> AnnealingStrategy::unvisited_neighbours(PointIndex const& point) const {
  std::vector<PointIndex> candidates;
  for (std::size_t i = 0; i < point.size(); ++i)
    for (int step : {-1, 1}) {
      PointIndex neighbour = point;
      neighbour[i] += step;
      if (unvisited_.contains(neighbour)) candidates.push_back(neighbour);
    }
  return candidates;
}

std::optional<PointIndex> AnnealingStrategy::next() {
  if (current_) {
    auto const candidates = unvisited_neighbours(*current_);
    if (!candidates.empty()) {
      std::uniform_int_distribution<std::size_t> pick(0, candidates.size() - 1);
      return proposed_ = candidates[pick(rng_)];
    }
  }
  // A restart: the point drawn at the previous restart (still unvisited), then the next restart point is
  // drawn now, so that upcoming() can announce it. The draws happen here whether or not anyone asks
  // upcoming(), so the proposals do not depend on look-ahead.
  if (!restart_ || !unvisited_.contains(*restart_)) restart_ = random_unvisited({});
  proposed_ = restart_;
  restart_ = random_unvisited(proposed_);
  return proposed_;
}

std::vector<PointIndex> AnnealingStrategy::upcoming(std::size_t n) const {
  std::vector<PointIndex> out;
  auto add = [&](std::vector<PointIndex> const& points) {
    for (auto const& p : points)
      if (out.size() < n && p != proposed_ && std::find(out.begin(), out.end(), p) == out.end())
        out.push_back(p);
  };
  if (current_) add(unvisited_neighbours(*current_));
  if (proposed_) add(unvisited_neighbours(*proposed_));
  if (restart_) add({*restart_});
  return out;
}

void AnnealingStrategy::report(PointIndex const& point, std::optional<double> cost) {
  unvisited_.erase(point);
  if (proposed_ == point) proposed_.reset();
  temperature_ *= kCooling;
  if (!cost) return;  // a rejected point is never a place to stand
  if (!current_) {
    current_ = point;
    current_cost_ = *cost;
    return;
  }
  double const slowdown = (*cost - current_cost_) / current_cost_;
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  if (slowdown <= 0.0 || coin(rng_) < std::exp(-slowdown / temperature_)) {
    current_ = point;
    current_cost_ = *cost;
  }
}

}  // namespace fl::tuner
