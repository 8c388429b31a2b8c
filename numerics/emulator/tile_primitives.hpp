#pragma once
// The pieces every tiled loop order shares: the fp32 constants of the softmax, one tile of masked scores,
// and the per-row primitives (guarded max, exp2, P quantisation, epilogue). Each mutant switch that is not
// specific to one loop order lives here, once, at the line where the bug would be in a kernel.
#include <cmath>
#include <limits>

#include "numerics/attention_shape.hpp"
#include "numerics/emulator/emulator.hpp"
#include "numerics/mutants/catalogue.hpp"
#include "numerics/precision.hpp"

namespace fl::numerics::emulator {

using mutants::MutantId;
using mutants::MutantSet;

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// FlashAttention-3 computes exp2(x - max + 8) for FP8, so P lies in [0, 2^8] and uses e4m3's range
// (max 448) instead of [0, 1], where e4m3 has few values; l carries the same factor, which cancels.
inline constexpr float kFp8PScale = 256.0f;

struct SoftmaxConstants {
  float scale_log2 = 0;                       // softmax scale * log2(e): scores enter exp2 multiplied by it
  float softmax_scale = 0;                    // for the LSE and the backward's dQ, dK
  float p_scale = 1;                          // P is stored multiplied by this before rounding (fp8 only)
  Precision p_precision = Precision::fp32;    // P rounded to the input type before P.V
  Precision out_precision = Precision::fp32;  // O rounded at the end
};

SoftmaxConstants make_constants(AttentionShape const& shape, Precision precision, MutantSet mutants);

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
int key_blocks_for_query_tile(AttentionShape const& shape, int block_n, int row_end);
// First query row that sees key block [col_begin, ..): query tiles before it are skipped in FA-1 order.
bool tile_fully_masked(AttentionShape const& shape, int row_end, int col_begin);

// Scores S = Q K^T of rows [r0, r1) against keys [c0, c0 + block_n) in fp32, descaled, masked with -inf
// (causal and past the end of the keys). s: (r1 - r0) x block_n, row-major.
void score_tile(HeadView const& head, AttentionShape const& shape, MutantSet mutants, int r0, int r1, int c0,
                int block_n, float* s);

// The running max as used in an exponent: -inf (a row that has seen only masked keys) becomes 0 so that
// exp2(-inf - max) is 0, not NaN (FlashAttention's Check_inf).
inline float guard_max(float m, MutantSet mutants) {
  if (mutants.on(MutantId::masked_row_nan)) return m;  // FA_MUTANT_MASKED_ROW_NAN
  return m == kNegInf ? 0.0f : m;
}

inline float initial_max(MutantSet mutants) {
  return mutants.on(MutantId::m_init_zero) ? 0.0f : kNegInf;  // FA_MUTANT_M_INIT_ZERO
}

// exp2 of an argument already multiplied by log2(e): the kernels' exp2f.
inline float softmax_exp2(float x, MutantSet mutants) {
  if (mutants.on(MutantId::exp_base_mismatch)) return std::exp(x);  // FA_MUTANT_EXP_BASE_MISMATCH
  return std::exp2(x);
}

// 1/l, with the guard for a row that saw no key (l = 0) or carries NaN: O stays acc * 1.
inline float guarded_inverse(float l) {
  return (l == 0.0f || l != l) ? 1.0f : 1.0f / l;
}

// LSE in natural log: m * scale + log(l), minus the fp8 P scale that l carries.
inline float row_lse(float m, float l, SoftmaxConstants const& c, MutantSet mutants) {
  if (l == 0.0f || l != l) return kMaskedRowLse;
  float const log_l = std::log(l) - std::log(c.p_scale);
  if (mutants.on(MutantId::lse_without_max)) return log_l;  // FA_MUTANT_LSE_WITHOUT_MAX
  return m * c.softmax_scale + log_l;
}

}  // namespace fl::numerics::emulator
