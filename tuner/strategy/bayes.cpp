// Bayesian optimisation: a Gaussian process over log(time) on the index lattice scaled to [0, 1], and
// the next point is the unvisited valid point of largest expected improvement. Log time, because tile
// choices change time multiplicatively (a 2x slower config is "as far" at 1 ms as at 10 ms).
//
// Look-ahead for the compile pool: during the first kInitialRandomPoints the proposals are the shuffled
// candidates in order (known exactly); after that, the next proposal depends on the point being measured,
// so upcoming() guesses the candidates of largest expected improvement under the current model (the next
// model differs by one observation, so its choice is usually among them).
#include <algorithm>
#include <cmath>
#include <random>

#include "tuner/strategy/strategies.hpp"

namespace fl::tuner {

namespace {
// Random evaluations before the model steers: with fewer, the GP's hyperparameter-free prior dominates.
constexpr std::size_t kInitialRandomPoints = 5;
// Length scale in scaled-index units: 0.4 lets one observation inform about +-1 step on a 4-value axis.
constexpr double kLengthScale = 0.4;
// Noise variance (standardised units): timing noise of ~1-2% against spreads of 10-50% between configs.
constexpr double kNoiseVariance = 1e-3;
// A rejected point (spills, wrong results) is fed to the model as this many times the worst time seen,
// so the model learns to avoid its neighbourhood instead of proposing it again and again.
constexpr double kRejectedPenalty = 2.0;
}  // namespace

BayesStrategy::BayesStrategy(ParameterSpace const& space, std::uint64_t seed)
    : space_(space), candidates_(space.valid_points()), rng_(seed) {
  std::shuffle(candidates_.begin(), candidates_.end(), rng_);
}

std::vector<double> BayesStrategy::features(PointIndex const& point) const {
  std::vector<double> x(point.size());
  for (std::size_t i = 0; i < point.size(); ++i) {
    auto const count = space_.parameters()[i].values.size();
    x[i] = count > 1 ? double(point[i]) / double(count - 1) : 0.0;
  }
  return x;
}

std::vector<std::size_t> BayesStrategy::ranked_by_expected_improvement() const {
  std::vector<std::size_t> order(candidates_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (observed_x_.size() < kInitialRandomPoints || observed_costs_.empty()) return order;  // shuffled order
  GaussianProcess gp(kLengthScale, kNoiseVariance);
  gp.fit(observed_x_, observed_y_);
  double const best = *std::min_element(observed_y_.begin(), observed_y_.end());
  std::vector<double> ei(candidates_.size());
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    double mean = 0.0, stddev = 0.0;
    gp.predict(features(candidates_[i]), mean, stddev);
    ei[i] = expected_improvement(mean, stddev, best);
  }
  // Stable: among equal improvements the earlier (shuffled) candidate first, as next() always chose.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ei[a] > ei[b]; });
  return order;
}

std::vector<PointIndex> BayesStrategy::upcoming(std::size_t n) const {
  std::vector<PointIndex> out;
  for (std::size_t i : ranked_by_expected_improvement()) {
    if (out.size() >= n) break;
    out.push_back(candidates_[i]);
  }
  return out;
}

std::optional<PointIndex> BayesStrategy::next() {
  if (candidates_.empty()) return std::nullopt;
  std::size_t const chosen = ranked_by_expected_improvement().front();
  PointIndex point = candidates_[chosen];
  candidates_.erase(candidates_.begin() + static_cast<std::ptrdiff_t>(chosen));
  return point;
}

void BayesStrategy::report(PointIndex const& point, std::optional<double> cost) {
  std::erase(candidates_, point);
  double y = 0.0;
  if (cost && *cost > 0.0) {
    y = std::log(*cost);
    observed_costs_.push_back(y);
  } else if (!observed_costs_.empty()) {
    y = *std::max_element(observed_costs_.begin(), observed_costs_.end()) + std::log(kRejectedPenalty);
  } else {
    return;  // nothing to anchor a penalty to yet
  }
  observed_x_.push_back(features(point));
  observed_y_.push_back(y);
}

}  // namespace fl::tuner
