#pragma once
// One search strategy per file behind this small interface (Kernel Tuner's design): the tuner asks for
// the next point, evaluates it (compile, verify, time) and reports the cost back. A strategy never
// evaluates anything itself, so every strategy can be tested offline against a recorded table
// (tuner/strategy/simulation.hpp) exactly as it runs on the GPU.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tuner/strategy/parameter_space.hpp"

namespace fl::tuner {

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string_view name() const = 0;
  // The next point to evaluate, or nullopt when the strategy has nothing more to propose.
  virtual std::optional<PointIndex> next() = 0;
  // cost: the measured median time in ms (lower is better); nullopt when the point was rejected
  // (failed to compile, spilled, failed verification): the strategy must not propose it again.
  virtual void report(PointIndex const& point, std::optional<double> cost) = 0;
  // Up to n points the strategy is likely to propose after the one just returned by next(), most likely
  // first, for the compile pool to build ahead while the GPU measures (a hint: never changes what next()
  // returns). Exhaustive and random know their order exactly; annealing and bayes guess (see their files).
  virtual std::vector<PointIndex> upcoming(std::size_t /*n*/) const { return {}; }
};

enum class StrategyKind { exhaustive, random, anneal, bayes };

std::optional<StrategyKind> parse_strategy(std::string_view text);
std::string_view name(StrategyKind kind);

// seed makes random, anneal and bayes reproducible.
std::unique_ptr<SearchStrategy> make_strategy(StrategyKind kind, ParameterSpace const& space,
                                              std::uint64_t seed);

}  // namespace fl::tuner
