// ToleranceModel's view of the inputs (tolerance_model.hpp), built once in its constructor: the recipe's
// rounding constants, each operand's rounding model, the squared elements and their row norms. Apart from
// the per-row formulas of tolerance_model.cpp, which stay one translation unit so that their helpers inline.
#include <algorithm>
#include <cmath>

#include "common/parallel_for.hpp"
#include "numerics/fp8_quantization.hpp"
#include "numerics/precision.hpp"
#include "numerics/tolerance_model.hpp"

namespace fl::numerics {

ToleranceModel::ToleranceModel(AttentionInputs const& in, PrecisionRecipe const& recipe,
                               ToleranceOptions const& options)
    : in_(in), s_(in.shape), r_(recipe), kappa_(options.kappa), d_(std::size_t(in.shape.head_dim)) {
  scale_ = s_.scale();
  q_noise_ = operand_noise(in.q, options.inputs_exact);
  k_noise_ = operand_noise(in.k, options.inputs_exact);
  v_noise_ = operand_noise(in.v, options.inputs_exact);
  do_noise_ = operand_noise(in.d_o, options.inputs_exact);
  var_p_ = sq(unit_roundoff(r_.probabilities)) / 3.0;
  u_p_ = unit_roundoff(r_.probabilities);
  floor_p_var_ = sq(subnormal_half_step(r_.probabilities) / r_.probability_scale) / 3.0;
  var_ds_ = sq(unit_roundoff(r_.score_gradients)) / 3.0;
  floor_ds_var_ = sq(subnormal_half_step(r_.score_gradients)) / 3.0;
  if (r_.scores != common::Precision::fp32) {
    var_score_ = sq(unit_roundoff(r_.scores)) / 3.0;
    floor_score_var_ = sq(subnormal_half_step(r_.scores)) / 3.0;
  }
  u_out_ = unit_roundoff(r_.outputs);
  floor_out_ = subnormal_half_step(r_.outputs);
  q2_ = squares(in.q, options.threads);
  k2_ = squares(in.k, options.threads);
  v2_ = squares(in.v, options.threads);
  do2_ = squares(in.d_o, options.threads);
  q_norm2_ = norms(q2_, options.threads);
  k_norm2_ = norms(k2_, options.threads);
  v_norm2_ = norms(v2_, options.threads);
  do_norm2_ = norms(do2_, options.threads);
}

OperandNoise ToleranceModel::operand_noise(std::vector<double> const& t, bool inputs_exact) const {
  OperandNoise n;
  if (t.empty()) return n;
  common::Precision const op = r_.operands;
  if (is_fp8(op)) {
    double amax = 0.0;
    for (double x : t) amax = std::max(amax, std::fabs(x));
    // Per-tensor scaling has the largest descale, hence the coarsest subnormal step: the safe choice
    // when the kernel's own scaling is unknown.
    double const descale = amax > 0.0 ? amax / max_finite(op) : 1.0;
    n.relative_var = sq(unit_roundoff(op)) / 3.0;
    n.floor_var = sq(subnormal_half_step(op) * descale) / 3.0;
    n.isotropic = true;
  } else if (!inputs_exact) {
    n.relative_var = sq(unit_roundoff(op)) / 3.0;
    n.floor_var = sq(subnormal_half_step(op)) / 3.0;
  }
  return n;
}

std::vector<double> ToleranceModel::squares(std::vector<double> const& t, int threads) {
  std::vector<double> out(t.size());
  common::parallel_for(t.size(), common::elementwise_threads(t.size(), threads),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t i = begin; i < end; ++i) out[i] = t[i] * t[i];
                       });
  return out;
}

std::vector<double> ToleranceModel::norms(std::vector<double> const& squared, int threads) const {
  std::vector<double> out(squared.size() / d_, 0.0);
  common::parallel_for(out.size(), common::elementwise_threads(squared.size(), threads),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t row = begin; row < end; ++row)
                           for (std::size_t e = 0; e < d_; ++e) out[row] += squared[row * d_ + e];
                       });
  return out;
}

}  // namespace fl::numerics
