#pragma once
// The evaluator on the GPU: compile (through the compile pool, SQLite cache first), prune on ptxas resources,
// verify on a small awkward problem and on sampled rows of the timed problem, then time (events, warm-up,
// median of >= 20, inputs rotated past the L2). A wrong kernel is recorded as 'wrong' with why, and never
// timed.
//
// Pipeline: prefetch() submits a candidate to the compile pool (one NVRTC worker per core), so while this
// thread verifies and times candidate i on the GPU, the workers compile the candidates the strategy will ask
// for next. Only this thread touches the GPU (one CUDA context, one thread). The verification inputs and
// their float64 reference come from a ReferenceCache shared by every candidate. With the fast pace the
// verdict on the timed problem is computed on a second thread while this one times the candidate, and a
// candidate clearly slower than the best so far is timed by the probe runs only.
#include <future>
#include <map>
#include <optional>
#include <string>

#include "device/arch_limits.hpp"
#include "device/compile/compile_config.hpp"
#include "device/compile/compile_service.hpp"
#include "runtime/device.hpp"
#include "tuner/compile/compile_pool.hpp"
#include "tuner/run/timing.hpp"
#include "tuner/tune/evaluator.hpp"
#include "tuner/tune/reference_cache.hpp"

namespace fl::tuner {

// How a candidate's evaluation is paced (fa-tune --pace). Neither setting changes what is verified or how a
// config that can win is timed; "baseline" is the 2026-11-29 protocol, kept so that one GPU run measures
// before and after.
struct EvaluationPace {
  bool judge_while_timing = true;  // tuner/tune/judge_overlap.hpp
  bool cut_clearly_slower = true;  // tuner/measure/early_stop.hpp
  bool encode_inputs_once = true;  // ReferenceCache(encode_once)
};
// "fast" (every setting on) or "baseline" (all off); nullopt for another name.
std::optional<EvaluationPace> pace_named(std::string const& name);

class GpuEvaluator final : public Evaluator {
 public:
  // `invalidator` drops a cached CUBIN the driver refuses to load (the pool's workers have their own
  // connections; this one belongs to the calling thread).
  GpuEvaluator(device::Family const& family, CompilePool& pool, device::CompileService& invalidator,
               device::CompileSpec spec, runtime::DeviceInfo device, TimingOptions timing,
               ReferenceCache& references, EvaluationPace pace = {});
  Evaluation evaluate(device::Config const& config, device::Problem const& problem) override;
  void prefetch(device::Config const& config, device::Problem const& problem) override;
  void prepare(device::Problem const& problem) override;  // the timed problem's backward forward, ahead
  // A fresh primary context (runtime::reset_primary_context); nothing of the old one is kept here (every
  // evaluation loads its module and allocates its buffers anew), so the next candidate runs as in a new run.
  bool recover() override;
  void hear_best(std::optional<double> best_ms) override { best_ms_ = best_ms; }

 private:
  using PendingCompile = std::future<runtime::Result<device::CompileResult>>;
  PendingCompile& submit(device::Config const& config, device::Problem const& problem, bool urgent);

  device::Family const& family_;
  CompilePool& pool_;
  device::CompileService& invalidator_;
  device::CompileSpec spec_;
  runtime::DeviceInfo device_;
  device::ArchLimits limits_;
  TimingOptions timing_;
  ReferenceCache& references_;
  EvaluationPace pace_;
  std::optional<double> best_ms_;                  // the problem's best median so far (hear_best)
  std::map<std::string, PendingCompile> pending_;  // by config text and problem
};

// The small problem every candidate must pass first: odd sequence lengths (no block multiple), two
// heads, the problem's dtype, head dim, mask and direction.
device::Problem verification_problem(device::Problem const& problem);

// Whether a runtime error left the CUDA context unusable (sticky errors: every later call fails the same).
bool is_sticky_cuda_error(std::string const& message);

}  // namespace fl::tuner
