#pragma once
// Shorter timing for a candidate that cannot win. After the warm-up, the first kProbeRuns timed runs are a
// probe: when even the fastest of them is more than kClearlySlower times the median of the best config of
// the problem so far, the candidate is verified (it never gets here otherwise) but cannot be the best, so
// its timing stops there and its statistics are those of the probe runs (runs = kProbeRuns in the database,
// which is how a cut measurement is told from a full one). Every other candidate gets the full protocol.
//
// Why these numbers: the p20-p80 spread of a full measurement on the H200 fixture is under 1% and the
// remeasure rule (timing_stats.hpp) already treats a 15% jump as suspicious, so a fastest-of-5 that is 25%
// over the best median is far outside noise; on the recorded fixture (tests/tuner/data) 73 of the 126 timed
// configs would be cut, and the winner is the same (tests/tuner/measure/early_stop_test.cpp).
#include <optional>
#include <vector>

namespace fl::tuner {

inline constexpr int kProbeRuns = 5;
inline constexpr double kClearlySlower = 1.25;

// The fastest probe run above which a candidate stops after the probe: kClearlySlower x the best median
// so far; none before anything was timed.
std::optional<double> cut_threshold_ms(std::optional<double> best_median_ms);

// Whether the probe (the timed runs so far, kProbeRuns of them) says: stop, this one cannot win.
bool cut_after_probe(std::vector<double> const& probe_ms, std::optional<double> threshold_ms);

}  // namespace fl::tuner
