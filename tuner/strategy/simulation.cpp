#include "tuner/strategy/simulation.hpp"

#include <limits>

namespace fl::tuner {

SimulationResult simulate(SearchStrategy& strategy, ParameterSpace const& space, RecordedCost const& cost,
                          std::size_t budget) {
  SimulationResult result;
  while (result.evaluations < budget) {
    auto point = strategy.next();
    if (!point) break;
    Config const config = space.config_of(*point);
    auto const measured = cost(config);
    strategy.report(*point, measured);
    ++result.evaluations;
    if (measured && (!result.best_cost || *measured < *result.best_cost)) {
      result.best_cost = measured;
      result.best_config = config;
    }
    result.best_after.push_back(result.best_cost.value_or(std::numeric_limits<double>::infinity()));
  }
  return result;
}

}  // namespace fl::tuner
