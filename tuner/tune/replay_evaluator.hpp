#pragma once
// Answers from recorded costs (a committed H200 tuning run, or a synthetic table in tests): the tuning
// loop, resume and strategies run offline exactly as on the GPU.
#include <functional>

#include "tuner/strategy/simulation.hpp"
#include "tuner/tune/evaluator.hpp"

namespace fl::tuner {

class ReplayEvaluator final : public Evaluator {
 public:
  // on_evaluate (optional) runs before each answer: tests use it to count calls or to die mid-run.
  explicit ReplayEvaluator(RecordedCost cost, std::function<void()> on_evaluate = {})
      : cost_(std::move(cost)), on_evaluate_(std::move(on_evaluate)) {}
  Evaluation evaluate(device::Config const& config, device::Problem const& problem) override;

 private:
  RecordedCost cost_;
  std::function<void()> on_evaluate_;
};

}  // namespace fl::tuner
