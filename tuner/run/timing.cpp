#include "tuner/run/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "runtime/event.hpp"
#include "tuner/measure/early_stop.hpp"

namespace fl::tuner {
namespace {

// Launches, untimed, from launch index `index` on, in batches that the stop event waits for, until
// `settle_ms` of wall time have passed; returns the next launch index. A batch is sized from the last
// one's time per launch to end near the deadline, and at most doubles, so a launch far shorter than its
// first measurement cannot queue seconds of work past it.
runtime::Result<int> settle(std::function<runtime::Status(int)> const& launch, int index, int settle_ms,
                            runtime::Event& start, runtime::Event& stop) {
  using clock = std::chrono::steady_clock;
  auto const until = clock::now() + std::chrono::milliseconds(settle_ms);
  long batch = 1;
  for (auto now = clock::now(); now < until;) {
    auto const began = now;
    if (auto st = start.record(); !st) return st.error();
    for (long k = 0; k < batch; ++k)
      if (auto st = launch(index++); !st) return st.error();
    if (auto st = stop.record(); !st) return st.error();
    if (auto waited = runtime::elapsed_ms(start, stop); !waited) return waited.error();
    now = clock::now();
    double const per_launch = std::chrono::duration<double>(now - began).count() / double(batch);
    double const left = std::chrono::duration<double>(until - now).count();
    batch = std::clamp(long(std::ceil(left / std::max(per_launch, 1e-9))), 1L, 2 * batch);
  }
  return index;
}

std::vector<double> times_of(std::vector<RunSample> const& samples) {
  std::vector<double> ms;
  ms.reserve(samples.size());
  for (auto const& s : samples) ms.push_back(s.ms);
  return ms;
}

}  // namespace

runtime::Result<TimedRuns> time_runs(std::function<runtime::Status(int)> const& launch,
                                     TimingOptions options) {
  auto start = runtime::Event::create();
  if (!start) return start.error();
  auto stop = runtime::Event::create();
  if (!stop) return stop.error();
  for (int i = 0; i < options.warmup; ++i)
    if (auto st = launch(i); !st) return st.error();
  int first_timed = options.warmup;
  if (options.settle_ms > 0) {
    auto next = settle(launch, first_timed, options.settle_ms, start.value(), stop.value());
    if (!next) return next.error();
    first_timed = next.value();
  }
  TimedRuns out;
  for (int i = 0; i < options.runs; ++i) {
    int const index = first_timed + i;
    if (auto st = start->record(); !st) return st.error();
    if (auto st = launch(index); !st) return st.error();
    if (auto st = stop->record(); !st) return st.error();
    auto elapsed = runtime::elapsed_ms(start.value(), stop.value());
    if (!elapsed) return elapsed.error();
    out.samples.push_back({elapsed.value(), index, std::chrono::system_clock::now()});
    if (int(out.samples.size()) == kProbeRuns && cut_after_probe(times_of(out.samples), options.cut_above_ms))
      break;
  }
  // One definition of the statistics for every caller (tuner/measure/timing_stats.hpp).
  auto stats = summarize(times_of(out.samples));
  if (!stats) return runtime::Error{"timing", "no timed runs (runs must be positive)", ""};
  out.stats = *stats;
  return out;
}

}  // namespace fl::tuner
