#pragma once
// The per-row half of the tolerance model (numerics/tolerance.hpp): the error variance of every output
// element of one query row (O, LSE, dQ) or one key row (dK, dV), from the operands' rounding, the scores'
// uncertainty and the fp32 sums. tolerance_bounds (tolerance.cpp) picks the rows and runs them in parallel.
// Internal to numerics: the formulas are documented where they are computed (tolerance_model.cpp; the
// operands' rounding models and norms, built once, in tolerance_model_operands.cpp).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/tolerance.hpp"

namespace fl::numerics {

// The rounding model of one operand tensor (Q, K, V or dO).
struct OperandNoise {
  double relative_var = 0.0;  // u^2 / 3, or 0 when the operand is used exactly
  double floor_var = 0.0;     // variance of the absolute error of values that land in the subnormals
  bool isotropic = false;     // FP8 may rotate Q and K (incoherent processing): errors spread over d
};

struct RowStats {
  double lse = -std::numeric_limits<double>::infinity();
  double m = 0.0;
  double delta = 0.0;
  double var_lse = 0.0;
  double var_delta = 0.0;
};

class ToleranceModel {
 public:
  ToleranceModel(AttentionInputs const& in, PrecisionRecipe const& recipe, ToleranceOptions const& options);

  // Bounds of O (d), LSE and, with dO, dQ (d) of query row `row`; returns the row's statistics.
  // Null outputs are skipped (statistics only).
  RowStats query_row(std::size_t row, double* tau_o, double* tau_lse, double* tau_dq) const;

  // Bounds of dK and dV (d each) of key row `kr`, given the statistics of every query row.
  void key_row(std::size_t kr, std::vector<RowStats> const& stats, double* tau_dk, double* tau_dv) const;

 private:
  static constexpr double kU32 = 5.9604644775390625e-08;  // 2^-24: fp32 scores, statistics and accumulators
  static double sq(double x) { return x * x; }

  OperandNoise operand_noise(std::vector<double> const& t, bool inputs_exact) const;
  // Element by element and row by row in parallel (a headline backward's inputs are 134M elements: ~2 s of
  // one core per tuning problem before); each row's norm is summed in the same order, so the same bits.
  static std::vector<double> squares(std::vector<double> const& t, int threads);
  std::vector<double> norms(std::vector<double> const& squared, int threads) const;

  double row_norm2(std::vector<double> const& squared, std::size_t row) const {
    if (&squared == &q2_) return q_norm2_[row];
    if (&squared == &k2_) return k_norm2_[row];
    if (&squared == &v2_) return v_norm2_[row];
    return do_norm2_[row];
  }

  double element_var(OperandNoise const& n, double x, double row_norm2) const {
    if (n.relative_var == 0.0 && n.floor_var == 0.0) return 0.0;
    double const mag2 = n.isotropic ? std::max(x * x, row_norm2 / double(d_)) : x * x;
    return n.relative_var * mag2 + n.floor_var;
  }

  double pair_var(OperandNoise const& nx, std::size_t a, std::vector<double> const& x2,
                  OperandNoise const& ny, std::size_t b, std::vector<double> const& y2) const;
  double score_var(std::size_t row, std::size_t kr, double score, double m) const;
  double weight_uncertainty(double log_p, double var_s, double var_lse) const;
  // The LSE bound's share of the dot products' one-signed (round-toward-zero) error; p: the row's weights.
  double coherent_dot_lse(std::size_t row, std::size_t k0, std::vector<double> const& p) const;

  // A sequential fp32 sum of n terms with sum of squares `sum_sq` and result `total`: its partial sums
  // S_k satisfy sum S_k^2 ~ n (sum_sq / 2 + total^2 / 3); each addition adds a relative u32 / sqrt(3).
  static double accumulation_var(int n, double sum_sq, double total) {
    return sq(kU32) * double(n) * (sum_sq + sq(total)) / 3.0;
  }

  double finish(double var, double value) const {
    double const pre = kappa_ * std::sqrt(var);
    return pre + u_out_ * (std::fabs(value) + pre) + floor_out_;
  }

  double const* qrow(std::size_t r) const { return in_.q.data() + r * d_; }
  double const* krow(std::size_t r) const { return in_.k.data() + r * d_; }
  double const* vrow(std::size_t r) const { return in_.v.data() + r * d_; }
  double const* dorow(std::size_t r) const { return in_.d_o.data() + r * d_; }

  AttentionInputs const& in_;
  common::AttentionShape s_;
  PrecisionRecipe r_;
  double kappa_;
  std::size_t d_;
  double scale_ = 1.0;
  OperandNoise q_noise_, k_noise_, v_noise_, do_noise_;
  double var_p_ = 0.0, u_p_ = 0.0, floor_p_var_ = 0.0, var_ds_ = 0.0, floor_ds_var_ = 0.0;
  double u_out_ = 0.0, floor_out_ = 0.0;
  // Scaled scores rounded to 16 bits before the softmax (PrecisionRecipe::scores): relative u_S^2 / 3 and
  // the subnormal floor; both 0 for fp32 scores, whose rounding score_var already carries.
  double var_score_ = 0.0, floor_score_var_ = 0.0;
  std::vector<double> q2_, k2_, v2_, do2_;
  std::vector<double> q_norm2_, k_norm2_, v_norm2_, do_norm2_;  // squared row norms
};

}  // namespace fl::numerics
