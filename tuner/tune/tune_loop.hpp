#pragma once
// The tuning loop for one family and problem: the strategy proposes, the store answers what is already
// measured (resume), the evaluator measures the rest, every result is committed to SQLite the moment it
// exists. A run killed at any point loses nothing it finished; the next run skips it.
#include <chrono>
#include <optional>
#include <string>

#include "db/database.hpp"
#include "db/tuning_store.hpp"
#include "tuner/family.hpp"
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
  std::optional<int> budget;  // evaluations (measured now or resumed) per problem
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

struct TuneOutcome {
  std::optional<Config> best;
  std::optional<TimingStats> best_stats;
  double best_tflops = 0.0;
  int evaluated = 0;   // measured in this run
  int resumed = 0;     // answered from the store
  int rejected = 0;    // wrong, pruned or failed
  int remeasured = 0;  // suspicious speedups measured a second time
};

db::ProblemKey problem_key(Problem const& problem);

TuneOutcome tune_problem(Family const& family, Problem const& problem, SearchStrategy& strategy,
                         ParameterSpace const& space, Evaluator& evaluator, TuneStore const& store,
                         TuneLimits const& limits, Progress* progress = nullptr);

}  // namespace fl::tuner
