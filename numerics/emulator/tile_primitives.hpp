#pragma once
// The pieces every tiled loop order shares: the fp32 constants of the softmax, one tile of masked scores,
// and the per-row primitives (guarded max, exp2, P quantisation, epilogue). Each mutant switch that is not
// specific to one loop order lives here, once, at the line where the bug would be in a kernel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "common/attention_shape.hpp"
#include "numerics/emulator/emulator.hpp"
#include "numerics/mutants/catalogue.hpp"
#include "numerics/precision.hpp"

namespace fl::numerics::emulator {

using mutants::MutantId;
using mutants::MutantSet;

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Every primitive below is written once for Real = float (the kernels' arithmetic, what the emulator runs)
// and instantiated for Real = double only by the row trace behind fa-explain (--precision fp64: the
// lesson's numbers in exact arithmetic), so that each mutant switch stays at one line for both.
template <class Real>
constexpr Real log2e() {
  if constexpr (std::is_same_v<Real, float>)
    return kLog2e;
  else
    return 1.4426950408889634074;
}
template <class Real>
constexpr Real negative_infinity() {
  return -std::numeric_limits<Real>::infinity();
}

template <class Real>
struct BasicSoftmaxConstants {
  Real score_scale = 0;    // the softmax scale as applied to the scores (1/sqrt(d) unless a mutant drops it)
  Real scale_log2 = 0;     // score_scale * log2(e): scores enter exp2 multiplied by it
  Real softmax_scale = 0;  // for the LSE and the backward's dQ, dK
  // P is computed multiplied by this (FP8: FlashAttention-3's exp2(x - m + 8), P <= 2^8, inside e4m3's
  // range and clear of its subnormals); l carries the same factor, which cancels in O = acc / l.
  Real p_scale = 1;
  common::Precision p_precision = common::Precision::fp32;    // P rounded to this before P.V
  common::Precision ds_precision = common::Precision::fp32;   // dS rounded to this before dS.K and dS^T.Q
  common::Precision out_precision = common::Precision::fp32;  // O, dQ, dK, dV rounded at the end
  Fp8Variants fp8_variants;                                   // FP8 recipes only (numerics/fp8_variants.hpp)
};
using SoftmaxConstants = BasicSoftmaxConstants<float>;

// From the precision recipe (numerics/precision_recipe.hpp), with the mutants that change a constant.
template <class Real = float>
BasicSoftmaxConstants<Real> make_constants(common::AttentionShape const& shape, PrecisionRecipe const& recipe,
                                           MutantSet mutants);

// x rounded to precision p as a kernel's product consumes it; in float64 arithmetic nothing is rounded.
template <class Real>
Real round_as_kernel(common::Precision p, Real x) {
  if constexpr (std::is_same_v<Real, float>)
    return round_to(p, x);
  else
    return x;
}

// P as the P.V product sees it, scaled back: round(p * p_scale) / p_scale (p_scale is a power of two).
inline float round_probability(float p, SoftmaxConstants const& c) {
  return round_to(c.p_precision, p * c.p_scale) / c.p_scale;
}

// P as the P.V product multiplies it (unscaled by nothing: p carries p_scale): rounded once, or for
// two_term_p the rounded high term plus the rounded residual, each e4m3, the residual scaled by
// kTwoTermLowScale into e4m3's range and back (two P.V products summed in fp32 in a kernel).
template <class Real>
Real p_as_multiplied(BasicSoftmaxConstants<Real> const& c, Real p) {
  Real const hi = round_as_kernel(c.p_precision, p);
  if (!c.fp8_variants.has(Fp8Variant::two_term_p)) return hi;
  Real const lo_scale = Real(kTwoTermLowScale);
  return hi + round_as_kernel(c.p_precision, (p - hi) * lo_scale) / lo_scale;
}

// block_p_scale: log2 of one (row, key block)'s own P scale over the running max's, the integer
// floor(max_for_p - block_max) in log2 units, within [0, kMaxBlockPShift], so that the block's largest
// weight times p_scale lands in (p_scale/2, p_scale]. 0 for every other variant and for a masked block.
template <class Real>
Real block_p_shift(BasicSoftmaxConstants<Real> const& c, Real max_for_p_scaled, Real block_max) {
  if (!c.fp8_variants.has(Fp8Variant::block_p_scale) || block_max == negative_infinity<Real>())
    return Real(0);
  Real const gap = max_for_p_scaled - block_max * c.scale_log2;
  if (!(gap > Real(0))) return Real(0);  // the block holds the max (or a mutant's stale max lies above it)
  return std::min(Real(kMaxBlockPShift), std::floor(gap));
}

// One (batch, query head) with its key/value head: row pointers into the prepared operands.
struct HeadView {
  float const* q = nullptr;          // (N_q, D)
  float const* q_descale = nullptr;  // (N_q)
  float const* k = nullptr;          // (N_k, D)
  float const* k_descale = nullptr;
  float const* v = nullptr;  // (N_k, D)
  float const* v_descale = nullptr;
};

// Number of key blocks a query tile [.., row_end) visits: all of them, or for causal masks up to the
// block holding the last visible key of its last row (FlashAttention skips blocks above the diagonal).
int key_blocks_for_query_tile(common::AttentionShape const& shape, int block_n, int row_end);
// First query row that sees key block [col_begin, ..): query tiles before it are skipped in FA-1 order.
bool tile_fully_masked(common::AttentionShape const& shape, int row_end, int col_begin);

// Scores S = Q K^T of rows [r0, r1) against keys [c0, c0 + block_n) in fp32, descaled, masked with -inf
// (causal and past the end of the keys). s: (r1 - r0) x block_n, row-major.
template <class Real>
void score_tile(HeadView const& head, common::AttentionShape const& shape, MutantSet mutants, int r0, int r1,
                int c0, int block_n, Real* s);

// The running max as used in an exponent: -inf (a row that has seen only masked keys) becomes 0 so that
// exp2(-inf - max) is 0, not NaN (FlashAttention's Check_inf).
template <class Real>
Real guard_max(Real m, MutantSet mutants) {
  if (mutants.on(MutantId::masked_row_nan)) return m;  // FA_MUTANT_MASKED_ROW_NAN
  return m == negative_infinity<Real>() ? Real(0) : m;
}

template <class Real = float>
Real initial_max(MutantSet mutants) {
  return mutants.on(MutantId::m_init_zero) ? Real(0) : negative_infinity<Real>();  // FA_MUTANT_M_INIT_ZERO
}

// Exponent of P in log2 units, x * scale_log2 - max_scaled, with the product rounded before the
// subtraction. FlashAttention-2 writes the same expression and lets the compiler fuse it into one FFMA;
// fused, the row maximum's exponent is the rounding error of max * scale_log2 (up to 2^-24 of it) instead
// of exactly 0, so P exceeds 1 and exp2 overflows once scaled scores reach about 2^31 (the near_dtype_max
// input family). Unfused, x <= max implies round(x * c) <= round(max * c): P <= 1 always.
template <class Real>
Real p_exponent(Real score, Real scale_log2, Real max_scaled) {
  Real const scaled = score * scale_log2;
  return scaled - max_scaled;
}

// exp2 of an argument already multiplied by log2(e): the kernels' exp2f.
template <class Real>
Real softmax_exp2(Real x, MutantSet mutants) {
  if (mutants.on(MutantId::exp_base_mismatch)) return std::exp(x);  // FA_MUTANT_EXP_BASE_MISMATCH
  return std::exp2(x);
}

// 1/l, with the guard for a row that saw no key (l = 0) or carries NaN: O stays acc * 1.
template <class Real>
Real guarded_inverse(Real l) {
  return (l == Real(0) || l != l) ? Real(1) : Real(1) / l;
}

// LSE in natural log: m * scale + log(l), minus the fp8 P scale that l carries. The scale is the one the
// scores were exponentiated with: a kernel derives both from one scale * log2(e) (fa_epilogue.cuh:
// (m * scale_log2 + log2 l) * ln 2), so with missing-scale its LSE is the unscaled scores' log-sum-exp, and
// the backward, which recomputes P = exp(s * score_scale - LSE), stays consistent with it.
template <class Real>
Real row_lse(Real m, Real l, BasicSoftmaxConstants<Real> const& c, MutantSet mutants) {
  if (l == Real(0) || l != l) return Real(kMaskedRowLse);
  Real const log_l = std::log(l) - std::log(c.p_scale);
  if (mutants.on(MutantId::lse_without_max)) return log_l;  // FA_MUTANT_LSE_WITHOUT_MAX
  return m * c.score_scale + log_l;
}

}  // namespace fl::numerics::emulator
