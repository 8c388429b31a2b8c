#include "tuner/strategy/simulation.hpp"

#include <limits>
#include <map>

namespace fl::tuner {

SimulationResult simulate(SearchStrategy& strategy, ParameterSpace const& space, RecordedCost const& cost,
                          std::size_t budget, std::vector<device::Config> const& first) {
  SimulationResult result;
  std::map<PointIndex, std::optional<double>> answered;
  auto const evaluate = [&](PointIndex const& point) {
    device::Config const config = space.config_of(point);
    auto const measured = cost(config);
    answered[point] = measured;
    strategy.report(point, measured);
    ++result.evaluations;
    if (measured && (!result.best_cost || *measured < *result.best_cost)) {
      result.best_cost = measured;
      result.best_config = config;
    }
    result.best_after.push_back(result.best_cost.value_or(std::numeric_limits<double>::infinity()));
  };
  for (auto const& config : first)
    if (auto point = space.point_of(config);
        point && !answered.contains(*point) && result.evaluations < budget)
      evaluate(*point);
  while (result.evaluations < budget) {
    auto point = strategy.next();
    if (!point) break;
    if (auto it = answered.find(*point); it != answered.end()) {
      strategy.report(*point, it->second);
      continue;
    }
    evaluate(*point);
  }
  return result;
}

}  // namespace fl::tuner
