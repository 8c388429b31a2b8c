#include "tuner/tune/prepared_check.hpp"

#include "numerics/check_sample.hpp"

namespace fl::tuner {

namespace {

// The same-precision baseline only adds notes, which a Verdict does not carry: not computed per problem.
numerics::CheckOptions tuner_check_options(device::Problem const& problem, std::size_t sample_rows,
                                           std::uint64_t seed) {
  numerics::CheckOptions options = check_options(problem, sample_rows, seed);
  options.cross_check_baseline = false;
  return options;
}

}  // namespace

PreparedCheck::PreparedCheck(device::Problem const& problem, HostInputs inputs, std::size_t sample_rows,
                             std::uint64_t seed)
    : problem_(problem),
      inputs_(std::move(inputs)),
      check_(to_numerics(problem_, inputs_), tuner_check_options(problem_, sample_rows, seed)) {}

Verdict PreparedCheck::judge(HostOutputs const& out) const {
  std::size_t const resampled_before = check_.resampled();
  Verdict verdict = verdict_of(check_.judge(to_numerics(out)));
  if (!verdict.pass || check_.resampled() != resampled_before) ++fallbacks_;
  return verdict;
}

std::vector<std::size_t> screened_rows(common::AttentionShape const& shape, std::vector<float> const& v,
                                       HostOutputs const& out, numerics::PrecisionRecipe const& recipe) {
  numerics::AttentionInputs in;
  in.shape = shape;
  in.v.assign(v.begin(), v.end());
  return numerics::screened_query_rows(in, to_numerics(out), recipe);
}

}  // namespace fl::tuner
