#include "tuner/run/timing.hpp"

#include <vector>

#include "runtime/event.hpp"
#include "tuner/measure/early_stop.hpp"

namespace fl::tuner {

runtime::Result<TimingStats> time_runs(std::function<runtime::Status(int)> const& launch,
                                       TimingOptions options) {
  auto start = runtime::Event::create();
  if (!start) return start.error();
  auto stop = runtime::Event::create();
  if (!stop) return stop.error();
  for (int i = 0; i < options.warmup; ++i)
    if (auto st = launch(i); !st) return st.error();
  std::vector<double> ms;
  for (int i = 0; i < options.runs; ++i) {
    if (auto st = start->record(); !st) return st.error();
    if (auto st = launch(options.warmup + i); !st) return st.error();
    if (auto st = stop->record(); !st) return st.error();
    auto elapsed = runtime::elapsed_ms(start.value(), stop.value());
    if (!elapsed) return elapsed.error();
    ms.push_back(elapsed.value());
    if (int(ms.size()) == kProbeRuns && cut_after_probe(ms, options.cut_above_ms)) break;
  }
  // One definition of the statistics for every caller (tuner/measure/timing_stats.hpp).
  auto stats = summarize(std::move(ms));
  if (!stats) return runtime::Error{"timing", "no timed runs (runs must be positive)", ""};
  return *stats;
}

}  // namespace fl::tuner
