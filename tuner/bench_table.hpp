#pragma once
// fa-bench's result rows and their CSV / JSON forms (written to a temporary name, then renamed). The CSV
// quotes config and check as RFC 4180 does (an inner " doubled); new columns go last, so that readers of
// older files that index by name keep working. The JSON has the same fields in the same order (one list,
// bench_table.cpp's fields()). The samples CSV has one line per timed run: the row's problem and config,
// then run (0, 1, ... in the order they ran), input_set (launch % input sets), ms and ended_utc (ISO 8601
// with microseconds: when the host saw the run end).
#include <filesystem>
#include <string>
#include <vector>

#include "tuner/run/timing.hpp"

namespace fl::tuner {

struct BenchRow {
  std::string family, config, dtype, mask, direction;
  int batch = 0, heads = 0, seqlen = 0, head_dim = 0;  // heads: query heads; seqlen: n_q
  int heads_kv = 0, seqlen_k = 0;                      // GQA and decode shapes (CSV: the last columns)
  TimingStats stats;
  double tflops = 0;
  std::string check;    // the check's summary ("pass ...", "checked earlier ...") or the failure's
  bool passed = false;  // the check's verdict, so that readers never match the summary's words
  int registers = 0;
  std::size_t spill_bytes = 0;
  // Device memory one problem allocates (Q, K, V, O, LSE, dO/dQ/dK/dV/D, scratch): naive's n^2 S and P
  // against the flash families' O(n) statistics.
  std::size_t device_bytes = 0;
  // Every timed run (fa-bench --samples) and the number of input sets they rotated over.
  std::vector<RunSample> samples;
  int input_sets = 0;
};

std::string to_csv(std::vector<BenchRow> const& rows);
std::string to_samples_csv(std::vector<BenchRow> const& rows);
std::string to_json(std::vector<BenchRow> const& rows, std::string const& device, std::string const& date);

}  // namespace fl::tuner
