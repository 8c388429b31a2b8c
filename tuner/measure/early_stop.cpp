#include "tuner/measure/early_stop.hpp"

#include <algorithm>

namespace fl::tuner {

std::optional<double> cut_threshold_ms(std::optional<double> best_median_ms) {
  if (!best_median_ms || !(*best_median_ms > 0.0)) return std::nullopt;
  return *best_median_ms * kClearlySlower;
}

bool cut_after_probe(std::vector<double> const& probe_ms, std::optional<double> threshold_ms) {
  if (!threshold_ms || probe_ms.size() < std::size_t(kProbeRuns)) return false;
  return *std::min_element(probe_ms.begin(), probe_ms.end()) > *threshold_ms;
}

}  // namespace fl::tuner
