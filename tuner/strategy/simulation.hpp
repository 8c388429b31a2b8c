#pragma once
// Replays a strategy against recorded costs instead of the GPU: the tuner's loop with the evaluation
// replaced by a table look-up. Used to test strategies offline against a real recorded tuning run.
#include <cstddef>
#include <functional>
#include <optional>

#include "tuner/strategy/strategy.hpp"

namespace fl::tuner {

// cost of a config as recorded (ms), nullopt for a config that was rejected.
using RecordedCost = std::function<std::optional<double>(device::Config const&)>;

struct SimulationResult {
  std::size_t evaluations = 0;
  std::optional<double> best_cost;
  device::Config best_config;
  std::vector<double> best_after;  // best cost after each evaluation (infinity before the first success)
};

// `first`: configs evaluated before the strategy's proposals and reported to it, as fa-tune's loop does with
// each problem's default (and --warm-start's configs); they count in the budget, and a proposal of one of
// them is answered again without counting (tuner/tune/tune_loop.cpp).
SimulationResult simulate(SearchStrategy& strategy, ParameterSpace const& space, RecordedCost const& cost,
                          std::size_t budget, std::vector<device::Config> const& first = {});

}  // namespace fl::tuner
