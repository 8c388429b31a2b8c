#include "tuner/run/timing.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/event.hpp"

namespace fl::tuner {

double quantile_sorted(std::vector<double> const& sorted, double q) {
  if (sorted.empty()) return 0.0;
  auto const rank = static_cast<std::size_t>(std::lround(q * double(sorted.size() - 1)));
  return sorted[std::min(rank, sorted.size() - 1)];
}

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
  }
  std::sort(ms.begin(), ms.end());
  TimingStats stats;
  stats.runs = options.runs;
  stats.median_ms = quantile_sorted(ms, 0.5);
  stats.p20_ms = quantile_sorted(ms, 0.2);
  stats.p80_ms = quantile_sorted(ms, 0.8);
  stats.min_ms = ms.front();
  stats.max_ms = ms.back();
  return stats;
}

}  // namespace fl::tuner
