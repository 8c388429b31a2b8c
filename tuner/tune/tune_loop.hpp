#pragma once
// The tuning loop for one family and problem: it starts from every measurement the store holds for the
// problem (resume), the strategy proposes, the evaluator measures what is not stored, every result is
// committed to SQLite the moment it exists. A run killed at any point loses nothing it finished; the next
// run starts from it.
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
#include "tuner/tune/tune_outcome.hpp"

namespace fl::tuner {

struct TuneStore {
  db::Database* database = nullptr;
  db::GpuKey gpu;
  std::string nvrtc_version;
  std::string source_hash;  // of the family's kernels_src files for this problem
};

struct TuneLimits {
  // Evaluations of this problem (measured now, or answered from the store: every stored row of its space
  // counts, ProblemTuning::resume), the first configs included.
  std::optional<int> budget;
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
  // Answers every measurement the store holds for this problem in this space first (tune/stored_rows.hpp),
  // so that nothing stored is measured again and the budget counts them. Done by the first evaluate_first
  // or search, or earlier by this call (fa-tune calls it for every problem before measuring anything, so that
  // the selection's budget left counts every problem's rows); once, never under limits.remeasure_run. Returns
  // the rows answered, which the progress line does not show: the caller adds them.
  int resume(TuneLimits const& limits);
  // Whether `config` is answered in this run already (resumed or measured).
  bool answered(device::Config const& config) const;
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
