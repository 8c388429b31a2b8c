#include "tuner/tune/prepared_check.hpp"

#include "common/parallel_for.hpp"
#include "numerics/check_sample.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_tensors.hpp"

namespace fl::tuner {

namespace {

// The same-precision baseline only adds notes, which a numerics::gpu::Verdict does not carry: not computed
// per problem.
numerics::CheckOptions tuner_check_options(device::Problem const& problem, std::size_t sample_rows,
                                           std::uint64_t seed,
                                           std::shared_ptr<numerics::RowStatistics const> statistics) {
  numerics::CheckOptions options = numerics::gpu::check_options(problem, sample_rows, seed);
  options.cross_check_baseline = false;
  // The judge runs while the GPU times the same candidate (tune/judge_overlap.hpp), and each timed run is
  // bracketed by events around its launches (run/timing.cpp): one core stays free for the thread that
  // launches them, so that the judge's threads do not delay a launch into the measured time.
  options.threads = common::all_cores_but_one();
  options.row_statistics = std::move(statistics);
  return options;
}

}  // namespace

PreparedCheck::PreparedCheck(device::Problem const& problem, device::HostInputs inputs,
                             std::size_t sample_rows, std::uint64_t seed,
                             std::shared_ptr<numerics::RowStatistics const> statistics)
    : problem_(problem),
      inputs_(std::move(inputs)),
      check_(numerics::gpu::to_attention_inputs(problem_, inputs_),
             tuner_check_options(problem_, sample_rows, seed, std::move(statistics))) {}

numerics::gpu::Verdict PreparedCheck::judge(device::HostOutputs const& out) const {
  std::lock_guard lock(observed_->mutex);
  std::size_t const resampled_before = check_.resampled();
  numerics::gpu::assign_attention_outputs(out, observed_->outputs, check_.options().threads);
  numerics::gpu::Verdict verdict = numerics::gpu::verdict_of(check_.judge(observed_->outputs));
  if (!verdict.pass || check_.resampled() != resampled_before) ++fallbacks_;
  return verdict;
}

std::vector<std::size_t> screened_rows(common::AttentionShape const& shape, std::vector<float> const& v,
                                       device::HostOutputs const& out,
                                       numerics::PrecisionRecipe const& recipe) {
  numerics::AttentionInputs in;
  in.shape = shape;
  in.v.assign(v.begin(), v.end());
  return numerics::screened_query_rows(in, numerics::gpu::to_attention_outputs(out), recipe);
}

}  // namespace fl::tuner
