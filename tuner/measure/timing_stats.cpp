#include "tuner/measure/timing_stats.hpp"

#include <algorithm>
#include <cmath>

namespace fl::tuner {

namespace {
double percentile(std::vector<double> const& sorted, double q) {
  double const pos = q * double(sorted.size() - 1);
  auto const lo = static_cast<std::size_t>(std::floor(pos));
  auto const hi = std::min(lo + 1, sorted.size() - 1);
  double const frac = pos - double(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}
}  // namespace

std::optional<TimingStats> summarize(std::vector<double> samples_ms) {
  if (samples_ms.empty()) return std::nullopt;
  std::sort(samples_ms.begin(), samples_ms.end());
  TimingStats s;
  s.median_ms = percentile(samples_ms, 0.5);
  s.p20_ms = percentile(samples_ms, 0.2);
  s.p80_ms = percentile(samples_ms, 0.8);
  s.min_ms = samples_ms.front();
  s.max_ms = samples_ms.back();
  s.runs = static_cast<int>(samples_ms.size());
  return s;
}

bool needs_remeasure(TimingStats const& candidate, std::optional<TimingStats> const& best_so_far) {
  if (!best_so_far) return false;
  return candidate.median_ms < best_so_far->median_ms * (1.0 - kSuspiciousSpeedup);
}

TimingStats confirm(TimingStats const& first, TimingStats const& again) {
  TimingStats const& slower = first.median_ms >= again.median_ms ? first : again;
  TimingStats result = slower;
  result.p20_ms = std::min(first.p20_ms, again.p20_ms);
  result.p80_ms = std::max(first.p80_ms, again.p80_ms);
  result.min_ms = std::min(first.min_ms, again.min_ms);
  result.max_ms = std::max(first.max_ms, again.max_ms);
  result.runs = first.runs + again.runs;
  return result;
}

}  // namespace fl::tuner
