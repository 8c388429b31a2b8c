#pragma once
// A problem's tuning outcome (tune_loop.hpp): why its search ended, every candidate's row and cost, the
// counts, the best so far; and the bookkeeping of one answer, the same for a row resumed from the store and
// one measured now.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/tuning_store.hpp"
#include "tuner/measure/timing_stats.hpp"

namespace fl::tuner {

// Why a problem's search ended.
enum class SearchEnd {
  not_reached,   // nothing evaluated: the run's budget, time or a stop ended before this problem
  exhausted,     // the strategy had nothing more to propose
  budget,        // its share of --budget was spent
  time,          // its share of --time-limit was spent
  stopped,       // a signal (Ctrl-C) stopped the run
  context_lost,  // the GPU context was lost and could not be restored
};
std::string_view name(SearchEnd end);

// Where one candidate's time went (ms; all 0 for one answered from the store).
struct CandidateCost {
  double compile_wait_ms = 0.0, compile_ms = 0.0, verify_ms = 0.0, timing_ms = 0.0;
};

struct TuneOutcome {
  // The fastest ok candidate so far: an index into `rows` (nullopt while none passed). Its config text,
  // timing, TFLOP/s and measured_at (its best_configs row's recorded_at) are that row's, kept nowhere else.
  std::optional<std::size_t> best_row;
  int evaluated = 0;   // measured in this run
  int resumed = 0;     // answered from the store
  int rejected = 0;    // wrong, pruned or failed
  int remeasured = 0;  // suspicious speedups measured a second time
  int timing_cut = 0;  // timed by the probe runs only (clearly slower than the best so far)
  // Every candidate of this run with the row it was answered with, in order: the rows resumed from the store
  // first (in the order they were stored), then the first configs and the strategy's proposals.
  std::vector<std::pair<std::string, db::Measurement>> rows;
  std::vector<CandidateCost> costs;  // parallel to rows
  // Set when the CUDA context was lost (a sticky error) and could not be restored: the config that caused
  // it and the error. Faults the evaluator recovered from are in `faults` (the culprits, stored as failed).
  std::optional<std::string> context_lost;
  std::vector<std::string> faults;
  SearchEnd end = SearchEnd::not_reached;
  // Wall time on the calling thread, seconds: waiting for compiles, verifying, timing; and NVRTC time spent
  // by the compile workers on the candidates measured (a sum over workers, so it can exceed wall time).
  double compile_wait_s = 0.0, verify_s = 0.0, timing_s = 0.0, compile_cpu_s = 0.0, wall_s = 0.0;
  double verify_sets_s = 0.0, verify_small_s = 0.0,
         verify_timed_run_s = 0.0;  // verify_s's parts (Evaluation)

  // The best's row (requires best_row).
  std::string const& best_config_text() const { return rows[*best_row].first; }
  db::Measurement const& best_measurement() const { return rows[*best_row].second; }
  double best_median_ms() const { return *best_measurement().median_ms; }         // an ok row always has one
  double best_tflops() const { return best_measurement().tflops.value_or(0.0); }  // 0: not stored
  // Its timing as the remeasure test reads it (nullopt while nothing passed).
  std::optional<TimingStats> best_stats() const;
};

// The answer `row` for the config `text` (`cost`: where its time went) in `outcome`: its row and cost, a
// rejection (anything but ok), the best so far. Returns its cost, the median ms (nullopt: rejected). The
// evaluated and resumed counts are the caller's.
std::optional<double> count_answer(TuneOutcome& outcome, std::string const& text, db::Measurement const& row,
                                   CandidateCost const& cost);

}  // namespace fl::tuner
