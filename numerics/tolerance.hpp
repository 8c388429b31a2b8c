#pragma once
// The tolerance model: a bound for every element of O, LSE, dQ, dK, dV that a correct implementation in
// the claimed precision stays within, derived from the recipe's unit roundoffs and the data
// (numerics/README.md has the derivation). In short, each rounding is a relative perturbation of variance
// u^2/3; first-order propagation gives each output element a standard deviation sigma, e.g. for O
//   sigma_O^2 = sum_j [ w_ij^2 (V_j - O_i)^2 + P_ij^2 (u_P^2/3 V_j^2 + var_e(V_j)) ] + fp32 sums,
// with w_ij the RMS error of P_ij from score errors (the exact second moment of P (e^delta - 1) for a
// Gaussian delta: linear while scores are certain, e^(sigma^2) once uncertain by more than ~1), and the
// bound is
//   tau = min(kappa * sigma, hull) + u_out |O| + half a subnormal step of the output type,
// where the hull term is the largest move a softmax-weighted average of V can make. kappa = 7 standard
// deviations (a correct kernel never gets there: checked over >= 1000 seeds per family and precision).
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics {

constexpr double kDefaultToleranceSigmas = 7.0;

struct ToleranceOptions {
  double kappa = kDefaultToleranceSigmas;
  // True when Q, K, V, dO are exactly representable in the claimed precision (so the kernel's operands are
  // the reference's). False adds their rounding to the bound. FP8 operands are always quantised.
  bool inputs_exact = true;
  int threads = 0;
  // dK and dV bounds need the variance of LSE and D of every query row. When set, rows outside the
  // sample borrow the largest variances seen on the sampled rows of their head, with the reference's LSE
  // and D (`reference->all_lse`, `all_delta`), instead of an O(n_k d) pass each: what makes a sampled
  // n = 16384 backward check take seconds. A heuristic, and reported as such by fa-check.
  bool approximate_unsampled_row_stats = false;
  SampledOutputs const* reference = nullptr;
};

// Bounds on the rows of `sample`, packed like SampledOutputs (o, dq: (rows, D); lse: (rows); dk, dv:
// (key rows, D)). lse of a fully masked row is 0: its only right value is -inf (+inf is accepted by
// fa-check, as FlashAttention-2 writes it).
struct ElementBounds {
  std::vector<double> o, lse, dq, dk, dv;
};

ElementBounds tolerance_bounds(AttentionInputs const& in, RowSample const& sample,
                               PrecisionRecipe const& recipe, ToleranceOptions const& options = {});

// Whether every value of Q, K, V (and dO) round-trips through `p` unchanged.
bool inputs_representable(AttentionInputs const& in, common::Precision p);

}  // namespace fl::numerics
