#pragma once
// The tuning loop for one family and problem: the strategy proposes, the store answers what is already
// measured (resume), the evaluator measures the rest, every result is committed to SQLite the moment it
// exists. A run killed at any point loses nothing it finished; the next run skips it.
//
// While candidate i is measured, the strategy's next candidates are handed to the evaluator as prefetch
// hints (the GPU evaluator compiles them on its pool), so compiling overlaps the GPU work.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "db/tuning_store.hpp"
#include "device/family.hpp"
#include "tuner/report/progress.hpp"
#include "tuner/strategy/strategy.hpp"
#include "tuner/tune/evaluator.hpp"

namespace fl::tuner {

struct TuneStore {
  db::Database* database = nullptr;
  db::GpuKey gpu;
  std::string nvrtc_version;
  std::string source_hash;  // of the family's kernels_src files for this problem
};

struct TuneLimits {
  std::optional<int>
      budget;  // evaluations (measured now or resumed) of this problem, the first configs included
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Asked before each new candidate: true stops the problem there (Ctrl-C). The candidate in flight is
  // finished and stored first; nothing is cut in the middle.
  std::function<bool()> stop;
  // Evaluated before the strategy's first proposal (the family default, so that every run has its
  // baseline measured while the GPU state is fresh; warm starts from neighbouring problems). They count
  // against the budget, and a strategy hears their cost as if it had proposed them.
  std::vector<device::Config> first;
  // Candidates offered to the evaluator ahead of time (0: none; the GPU evaluator uses twice its workers).
  std::size_t lookahead = 0;
  // A repeat of a --noise-runs series: measure every candidate again, even those the store has, and keep
  // the new measurement beside the stored one (db::store_remeasurement) under this run id.
  std::optional<std::int64_t> remeasure_run;
  std::optional<std::int64_t> run_id;  // the run id stored with new measurements
};

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
  std::optional<device::Config> best;
  std::optional<TimingStats> best_stats;
  double best_tflops = 0.0;
  int evaluated = 0;   // measured in this run
  int resumed = 0;     // answered from the store
  int rejected = 0;    // wrong, pruned or failed
  int remeasured = 0;  // suspicious speedups measured a second time
  int timing_cut = 0;  // timed by the probe runs only (clearly slower than the best so far)
  // Every candidate of this run (first configs included) with the row it was answered with, in order.
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
};

// One problem's tuning, in steps that a run over many problems interleaves: first every problem's first
// configs (the default: each problem gets its baseline before any problem searches), then each problem's
// search under its share of the budget and time. The strategy, the store's answers and the counts persist
// between the steps; each step's limits count what the problem evaluated in earlier steps.
class ProblemTuning {
 public:
  ProblemTuning(device::Family const& family, device::Problem problem, SearchStrategy& strategy,
                ParameterSpace const& space, Evaluator& evaluator, TuneStore store,
                Progress* progress = nullptr);
  ~ProblemTuning();
  ProblemTuning(ProblemTuning const&) = delete;
  ProblemTuning& operator=(ProblemTuning const&) = delete;

  // Shown before "candidate j/M" in the progress line (e.g. "problem 2/6 fa2_sm80 b4 h16 ...").
  void set_progress_prefix(std::string prefix);
  void evaluate_first(TuneLimits const& limits);  // limits.first, in order
  void search(TuneLimits const& limits);          // the strategy's proposals
  // Whether the store answers every config of the space (never under limits.remeasure_run): nothing here
  // would be measured, so nothing needs verifying.
  bool complete(TuneLimits const& limits);
  // Evaluations so far (measured now or answered from the store).
  int spent() const;
  SearchEnd end() const;
  // Stores the best config found (unless a --noise-runs repeat) and returns the outcome.
  TuneOutcome finish(TuneLimits const& limits);

 private:
  class Run;
  std::unique_ptr<Run> run_;
};

// evaluate_first, search and finish under one set of limits.
TuneOutcome tune_problem(device::Family const& family, device::Problem const& problem,
                         SearchStrategy& strategy, ParameterSpace const& space, Evaluator& evaluator,
                         TuneStore const& store, TuneLimits const& limits, Progress* progress = nullptr);

}  // namespace fl::tuner
