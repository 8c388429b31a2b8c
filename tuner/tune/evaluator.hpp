#pragma once
// What the tuning loop asks of one candidate: compile it, verify it, time it. The GPU evaluator does that
// on the device; the replay evaluator answers from recorded costs, so the loop (resume, strategies,
// storage) is tested without a GPU exactly as it runs with one.
#include <optional>
#include <string>

#include "tuner/config.hpp"
#include "tuner/measure/timing_stats.hpp"
#include "tuner/problem.hpp"

namespace fl::tuner {

struct Evaluation {
  std::string verdict = "ok";  // ok, wrong, pruned, failed (db/tuning_store.hpp)
  std::string diagnosis;       // why, when not ok
  std::optional<TimingStats> stats;
  double tflops = 0.0;
  std::string compile_cache_key;
  std::optional<double> clock_mhz;
  std::optional<double> temperature_c;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual Evaluation evaluate(Config const& config, Problem const& problem) = 0;
};

}  // namespace fl::tuner
