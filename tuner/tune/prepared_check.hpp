#pragma once
// numerics::PreparedCheck (prepare once, judge many) on the tuner's types: the tuner verifies every candidate
// on the same inputs, so the row sample, the float64 reference on it and the tolerance bounds are computed
// once per (problem, input family, seed, dtype, direction) and each candidate pays only the screen of its
// outputs and the per-element verdict. The verdict and its summary are numerics::gpu::judge_forward's by
// construction (the same numerics check, the same options, the same summary line);
// tests/tuner/tune/prepared_check_test.cpp compares both on passing, failing and screened outputs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "numerics/check.hpp"
#include "numerics/gpu/kernel_check.hpp"

namespace fl::tuner {

class PreparedCheck {
 public:
  // The same arguments as numerics::gpu::judge_forward: claimed precision = problem.dtype, sample_rows (0:
  // numerics' default: every row of a small problem), sample seed. `inputs` are kept (the screen reads V).
  // statistics: a backward problem's row statistics from numerics::gpu::reference_forward_with_statistics
  // (numerics::CheckOptions::row_statistics; the same verdict, without a statistics pass).
  PreparedCheck(device::Problem const& problem, device::HostInputs inputs, std::size_t sample_rows,
                std::uint64_t seed, std::shared_ptr<numerics::RowStatistics const> statistics = nullptr);

  // The verdict numerics::gpu::judge_forward(problem, inputs, out, sample_rows, seed) would give, with the
  // same summary.
  numerics::gpu::Verdict judge(device::HostOutputs const& out) const;

  device::Problem const& problem() const { return problem_; }
  device::HostInputs const& inputs() const { return inputs_; }
  numerics::AttentionInputs const& attention_inputs() const { return check_.inputs(); }  // in float64
  bool sampled() const { return check_.sampled(); }
  numerics::RowSample const& sample() const { return check_.sample(); }
  numerics::SampledOutputs const& reference() const { return check_.reference(); }  // on sample()
  // judge() calls that were not a pass on the prepared sample alone: a failure, or a screened row off the
  // sample (which paid a new reference).
  std::size_t fallbacks() const { return fallbacks_; }

 private:
  device::Problem problem_;
  device::HostInputs inputs_;
  numerics::PreparedCheck check_;
  mutable std::size_t fallbacks_ = 0;
  // The last outputs judged, in float64: kept so that each candidate's conversion reuses the pages (the
  // judge is const to its callers; the mutex serialises judges of one check from two threads). Behind a
  // pointer so that a PreparedCheck stays movable.
  struct Observed {
    std::mutex mutex;
    numerics::AttentionOutputs outputs;
  };
  std::unique_ptr<Observed> observed_ = std::make_unique<Observed>();
};

// The rows numerics' screen flags (numerics::screened_query_rows) for outputs in the tuner's types.
std::vector<std::size_t> screened_rows(common::AttentionShape const& shape, std::vector<float> const& v,
                                       device::HostOutputs const& out,
                                       numerics::PrecisionRecipe const& recipe);

}  // namespace fl::tuner
