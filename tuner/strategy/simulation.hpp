#pragma once
// Replays a strategy against recorded costs instead of the GPU: the tuner's loop with the evaluation
// replaced by a table look-up. Used to test strategies offline against a real recorded tuning run.
#include <cstddef>
#include <functional>
#include <optional>

#include "tuner/strategy/strategy.hpp"

namespace fl::tuner {

// cost of a config as recorded (ms), nullopt for a config that was rejected.
using RecordedCost = std::function<std::optional<double>(Config const&)>;

struct SimulationResult {
  std::size_t evaluations = 0;
  std::optional<double> best_cost;
  Config best_config;
  std::vector<double> best_after;  // best cost after each evaluation (infinity before the first success)
};

SimulationResult simulate(SearchStrategy& strategy, ParameterSpace const& space, RecordedCost const& cost,
                          std::size_t budget);

}  // namespace fl::tuner
