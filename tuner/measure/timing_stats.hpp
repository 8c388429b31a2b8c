#pragma once
// Summary statistics of repeated timings, and the rule that keeps a lucky measurement from winning.
#include <optional>
#include <vector>

namespace fl::tuner {

struct TimingStats {
  double median_ms = 0.0;
  double p20_ms = 0.0;
  double p80_ms = 0.0;
  double min_ms = 0.0;
  double max_ms = 0.0;
  int runs = 0;
  // (p80 - p20) / median: the spread the noise report and the outlier rule use.
  double relative_spread() const { return median_ms > 0.0 ? (p80_ms - p20_ms) / median_ms : 0.0; }
};

// Percentiles by linear interpolation between order statistics (the "type 7" rule NumPy uses).
// nullopt for an empty sample.
std::optional<TimingStats> summarize(std::vector<double> samples_ms);

// A candidate that beats the best so far by more than this fraction is measured again before it can
// win: a 15% jump between neighbouring configs is rare on a warm GPU, while clock boosts and a
// neighbour's idle phase produce exactly such one-off fast medians.
inline constexpr double kSuspiciousSpeedup = 0.15;

bool needs_remeasure(TimingStats const& candidate, std::optional<TimingStats> const& best_so_far);

// Combines a first and a repeated measurement: the slower median wins (a real speedup survives a second
// look; a lucky one does not), and the spread is the larger of the two.
TimingStats confirm(TimingStats const& first, TimingStats const& again);

}  // namespace fl::tuner
