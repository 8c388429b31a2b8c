#pragma once
// The measurement protocol (ARCHITECTURE.md): CUDA events around the launches only, warm-up first, the
// median of at least 20 runs with p20 and p80, and inputs rotated so that no run finds its inputs in L2.
#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "runtime/result.hpp"
#include "tuner/measure/timing_stats.hpp"

namespace fl::tuner {

struct TimingOptions {
  int warmup = 5;
  int runs = 30;  // >= 20
  // Set: stop after the probe runs when the fastest of them is above this (tuner/measure/early_stop.hpp);
  // the stats are then those of the probe runs.
  std::optional<double> cut_above_ms;
  // After the warm-up runs: keep launching, untimed, for this long (host wall time, the GPU kept busy)
  // before the first timed run. Under sustained load a card's power cap lowers its clock in steps: on
  // the H100 the first came 16-67 ms into the timed runs, and 30-run medians taken across it put the same
  // pair of configs -0.5% to 12.7% apart in four rounds, 6.9-8.3% after about 250 ms of warm-up
  // (experiments/card_transfer/README.md). 0: none.
  int settle_ms = 0;
};

// One timed run, kept so that a reader can ask what the median hides (two timing modes, an input set
// that is slower, a clock drop): its GPU time, its launch index (the `i` below) and when the host saw it
// end. elapsed_ms waits for the stop event, so `ended` trails the GPU's end by the wait's wake-up only,
// which lines a run up with nvidia-smi's 100 ms samples of clocks and power.
struct RunSample {
  double ms = 0.0;
  int launch = 0;
  std::chrono::system_clock::time_point ended;
};

struct TimedRuns {
  TimingStats stats;
  std::vector<RunSample> samples;  // in the order they ran
};

// Times `launch(i)` for i = 0, 1, ...: the callee picks input set i % sets (rotation) and enqueues the
// work; only that is between the two events of each run.
runtime::Result<TimedRuns> time_runs(std::function<runtime::Status(int)> const& launch,
                                     TimingOptions options);

}  // namespace fl::tuner
