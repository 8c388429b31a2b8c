#include "tuner/strategy/strategy.hpp"

#include <array>
#include <utility>

#include "tuner/strategy/strategies.hpp"

namespace fl::tuner {

namespace {
constexpr std::array<std::pair<StrategyKind, std::string_view>, 4> kNames{{
    {StrategyKind::exhaustive, "exhaustive"},
    {StrategyKind::random, "random"},
    {StrategyKind::anneal, "anneal"},
    {StrategyKind::bayes, "bayes"},
}};
}  // namespace

std::optional<StrategyKind> parse_strategy(std::string_view text) {
  for (auto const& [kind, text_name] : kNames)
    if (text_name == text) return kind;
  return std::nullopt;
}

std::string_view name(StrategyKind kind) {
  for (auto const& [k, text_name] : kNames)
    if (k == kind) return text_name;
  return "unknown";
}

std::unique_ptr<SearchStrategy> make_strategy(StrategyKind kind, ParameterSpace const& space,
                                              std::uint64_t seed) {
  switch (kind) {
    case StrategyKind::exhaustive:
      return std::make_unique<ExhaustiveStrategy>(space);
    case StrategyKind::random:
      return std::make_unique<RandomStrategy>(space, seed);
    case StrategyKind::anneal:
      return std::make_unique<AnnealingStrategy>(space, seed);
    case StrategyKind::bayes:
      return std::make_unique<BayesStrategy>(space, seed);
  }
  return nullptr;
}

}  // namespace fl::tuner
