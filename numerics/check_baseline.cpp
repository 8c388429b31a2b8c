#include "numerics/check_baseline.hpp"

#include <cmath>

#include "numerics/standard_attention.hpp"

namespace fl::numerics {

SampledOutputs baseline_outputs(AttentionInputs const& in, PrecisionRecipe const& recipe, bool sampled,
                                RowSample sample, int threads) {
  if (sampled) sample.key_rows.clear();  // the baseline's dK/dV would need every row's statistics
  return standard_attention_sampled(in, recipe, std::move(sample), threads);
}

BaselineCrossCheck cross_check_baseline(SampledOutputs const& base, SampledOutputs const& reference,
                                        ElementBounds const& bounds) {
  BaselineCrossCheck b;
  b.done = true;
  std::vector<double> const* refs[] = {&reference.o, &reference.lse, &reference.dq, &reference.dk,
                                       &reference.dv};
  std::vector<double> const* bases[] = {&base.o, &base.lse, &base.dq, &base.dk, &base.dv};
  std::vector<double> const* taus[] = {&bounds.o, &bounds.lse, &bounds.dq, &bounds.dk, &bounds.dv};
  for (int k = 0; k < 5; ++k) {
    std::vector<double> x = *bases[k];
    std::vector<double> const& ref = *refs[k];
    if (x.size() != ref.size() || x.empty()) {
      b.metrics.emplace_back();
      b.above_bound.push_back(0);
      b.bound_over_error.push_back(0.0);
      continue;
    }
    for (std::size_t i = 0; i < x.size(); ++i)  // masked rows: -inf == -inf
      if (std::isinf(ref[i]) && std::isinf(x[i])) x[i] = ref[i];
    ErrorMetrics const m = compute_metrics(x, ref);
    std::size_t above = 0;
    double tau_sq = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (element_error(x[i], ref[i]) > (*taus[k])[i]) ++above;
      if (std::isfinite((*taus[k])[i])) tau_sq += (*taus[k])[i] * (*taus[k])[i];
    }
    b.metrics.push_back(m);
    b.above_bound.push_back(above);
    b.bound_over_error.push_back(m.rmse > 0.0 ? std::sqrt(tau_sq / double(x.size())) / m.rmse : 0.0);
  }
  return b;
}

}  // namespace fl::numerics
