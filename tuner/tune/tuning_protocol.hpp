#pragma once
// How fa-tune times every candidate, in one place: the GPU backend times with it, the replay backend's
// recordings were taken with it, each measurement row stores it (schema v9), and a resumed run reuses only
// rows timed with it (stored_rows.hpp).
#include "db/tuning_store.hpp"

namespace fl::tuner {

// Warm-up runs, then the median of this many (>= 20 by the measurement protocol; 30 keeps p20/p80 stable).
constexpr int kTuningWarmupRuns = 5;
constexpr int kTuningTimedRuns = 30;
// No settle: every row of the shipped grid was timed without one. So a short kernel's timed runs can all
// fall before the power cap's first clock step (on the H100 a 0.85 ms kernel timed 13-15% faster than after
// fa-bench --settle-ms 200) and a longer one's straddle it (experiments/card_transfer/README.md). Changing
// this re-times every stored row on resume.
constexpr int kTuningSettleMs = 0;
constexpr db::TimingProtocol kTuningProtocol{kTuningWarmupRuns, kTuningSettleMs};

}  // namespace fl::tuner
