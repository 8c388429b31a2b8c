#pragma once
// numerics::run_check split into what depends on the inputs only (the row sample, the float64 reference on
// those rows, the tolerance bound of every sampled element) and what depends on a kernel's outputs (the
// screen of every row, the per-element verdict). The tuner verifies every candidate on the same inputs, so
// the first half is computed once per (problem, input family, seed, dtype, direction) and the second half per
// candidate: the same inputs, the same reference, the same bounds, the same verdict, only not recomputed.
//
// Exactness: run_check's sample is the structural rows, the seeded random rows and every row its cheap
// screen flags in the observed outputs (non-finite values, O outside the range of V). The prepared sample is
// the first two; when the screen flags a row outside it, the check falls back to numerics::run_check
// (through judge_forward) unchanged, so the verdict is the same by construction either way. A correct kernel
// is never flagged; a flagged one is almost always wrong and pays the full check once.
// tests/tuner/tune/prepared_check_test.cpp compares both on passing, failing and screened outputs.
#include <cstddef>
#include <cstdint>

#include "numerics/check.hpp"
#include "tuner/run/numerics_check.hpp"

namespace fl::tuner {

class PreparedCheck {
 public:
  // The same arguments as judge_forward: claimed precision = problem.dtype, sample_rows (0: numerics'
  // default: every row of a small problem), sample seed. `inputs` are kept (the screen reads V; a fallback
  // re-runs the whole check on them).
  PreparedCheck(Problem const& problem, HostInputs inputs, std::size_t sample_rows, std::uint64_t seed);

  // The verdict judge_forward(problem, inputs, out, sample_rows, seed) would give, with the same summary
  // (on an exact tie between two worst rows the one named may differ: run_check's order there is
  // unspecified).
  Verdict judge(HostOutputs const& out) const;

  Problem const& problem() const { return problem_; }
  HostInputs const& inputs() const { return inputs_; }
  bool sampled() const { return sampled_; }
  numerics::RowSample const& sample() const { return reference_.sample; }
  // How many judge() calls fell back to the full numerics::run_check (screen flagged a row off the sample).
  std::size_t fallbacks() const { return fallbacks_; }

 private:
  Problem problem_;
  HostInputs inputs_;
  std::size_t sample_rows_;
  std::uint64_t seed_;
  numerics::PrecisionRecipe recipe_;
  bool sampled_ = false;
  numerics::SampledOutputs reference_;
  numerics::ElementBounds bounds_;
  mutable std::size_t fallbacks_ = 0;
};

// The rows run_check's screen adds to a sample (flat query rows, ascending): rows with a non-finite O, dQ or
// LSE (LSE only where a key is visible), O outside the range of the V rows it averages (padded by the
// rounding slack of the recipe), or a nonzero O on a fully masked row. Mirrors numerics/check.cpp.
std::vector<std::size_t> screened_rows(numerics::AttentionShape const& shape, std::vector<float> const& v,
                                       HostOutputs const& out, numerics::PrecisionRecipe const& recipe);

}  // namespace fl::tuner
