#include "tuner/run/timing.hpp"

#include <vector>

#include "runtime/event.hpp"
#include "tuner/measure/early_stop.hpp"

namespace fl::tuner {

runtime::Result<TimedRuns> time_runs(std::function<runtime::Status(int)> const& launch,
                                     TimingOptions options) {
  auto start = runtime::Event::create();
  if (!start) return start.error();
  auto stop = runtime::Event::create();
  if (!stop) return stop.error();
  for (int i = 0; i < options.warmup; ++i)
    if (auto st = launch(i); !st) return st.error();
  std::vector<double> ms;
  TimedRuns out;
  for (int i = 0; i < options.runs; ++i) {
    int const index = options.warmup + i;
    if (auto st = start->record(); !st) return st.error();
    if (auto st = launch(index); !st) return st.error();
    if (auto st = stop->record(); !st) return st.error();
    auto elapsed = runtime::elapsed_ms(start.value(), stop.value());
    if (!elapsed) return elapsed.error();
    ms.push_back(elapsed.value());
    out.samples.push_back({elapsed.value(), index, std::chrono::system_clock::now()});
    if (int(ms.size()) == kProbeRuns && cut_after_probe(ms, options.cut_above_ms)) break;
  }
  // One definition of the statistics for every caller (tuner/measure/timing_stats.hpp).
  auto stats = summarize(std::move(ms));
  if (!stats) return runtime::Error{"timing", "no timed runs (runs must be positive)", ""};
  out.stats = *stats;
  return out;
}

}  // namespace fl::tuner
