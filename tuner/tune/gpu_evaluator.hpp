#pragma once
// The evaluator on the GPU: compile (SQLite cache first), prune on ptxas resources, verify on a small
// awkward problem and on sampled rows of the timed problem, then time (events, warm-up, median of >= 20,
// inputs rotated past the L2). A wrong kernel is recorded as 'wrong' with why, and never timed.
#include "runtime/device.hpp"
#include "tuner/compile/arch_limits.hpp"
#include "tuner/compile/compile_config.hpp"
#include "tuner/compile/compile_service.hpp"
#include "tuner/run/timing.hpp"
#include "tuner/tune/evaluator.hpp"

namespace fl::tuner {

class GpuEvaluator final : public Evaluator {
 public:
  GpuEvaluator(Family const& family, CompileService& compiler, CompileSpec spec, runtime::DeviceInfo device,
               TimingOptions timing);
  Evaluation evaluate(Config const& config, Problem const& problem) override;

 private:
  Family const& family_;
  CompileService& compiler_;
  CompileSpec spec_;
  runtime::DeviceInfo device_;
  ArchLimits limits_;
  TimingOptions timing_;
};

// The small problem every candidate must pass first: odd sequence lengths (no block multiple), two
// heads, the problem's dtype, head dim, mask and direction.
Problem verification_problem(Problem const& problem);

}  // namespace fl::tuner
