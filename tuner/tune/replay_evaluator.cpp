#include "tuner/tune/replay_evaluator.hpp"

namespace fl::tuner {

Evaluation ReplayEvaluator::evaluate(device::Config const& config, device::Problem const& problem) {
  if (on_evaluate_) on_evaluate_();
  Evaluation e;
  auto const ms = cost_(config);
  if (!ms) {
    e.verdict = "pruned";
    e.diagnosis = "rejected in the recording";
    return e;
  }
  e.stats =
      TimingStats{.median_ms = *ms, .p20_ms = *ms, .p80_ms = *ms, .min_ms = *ms, .max_ms = *ms, .runs = 1};
  e.tflops = device::attention_flops(problem) / (*ms * 1e-3) / 1e12;
  return e;
}

}  // namespace fl::tuner
