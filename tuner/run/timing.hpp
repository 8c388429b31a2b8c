#pragma once
// The measurement protocol (ARCHITECTURE.md): CUDA events around the launches only, warm-up first, the
// median of at least 20 runs with p20 and p80, and inputs rotated so that no run finds its inputs in L2.
#include <functional>
#include <optional>

#include "runtime/result.hpp"
#include "tuner/measure/timing_stats.hpp"

namespace fl::tuner {

struct TimingOptions {
  int warmup = 5;
  int runs = 30;  // >= 20
  // Set: stop after the probe runs when the fastest of them is above this (tuner/measure/early_stop.hpp);
  // the stats are then those of the probe runs.
  std::optional<double> cut_above_ms;
};

// Times `launch(i)` for i = 0, 1, ...: the callee picks input set i % sets (rotation) and enqueues the
// work; only that is between the two events of each run.
runtime::Result<TimingStats> time_runs(std::function<runtime::Status(int)> const& launch,
                                       TimingOptions options);

}  // namespace fl::tuner
