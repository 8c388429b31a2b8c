#pragma once
// Online softmax over the score tiles a thread holds in mma.sync C-fragment layout.
//
// A thread holds kMT 16-row tiles; in each it owns rows g and g+8 (g = lane / 4) and, across the quad of
// lanes 4g..4g+3, the columns of those rows. Row r = 2 * mt + h (h = 0 for row g, 1 for row g+8);
// s[mt][nt][2h + e] is (row, column 8 nt + 2c + e).
//
// Scores stay in raw units (Q.K); scale * log2(e) is applied inside one FFMA per element before ex2:
//   p = 2^(s * scale_log2 - M),   rescale = 2^(M_old - M_new),   M = m * scale_log2 (rounded to nearest).
// The FFMA forms s * scale_log2 exactly and rounds once, so the max element's argument is the rounding
// error of M, |delta| <= ulp(M) / 2: a factor 2^-delta common to every p of the row, which cancels in O
// and in LSE (both use this same M). That holds while the factor stays tame: below |M| = 2^16 it is
// within 2^(+-2^-8). At the scores of fp16/bf16 inputs near their maximum (|M| ~ 1e10, ulp 1024) it is
// 2^(+-512): inf or 0 (seen on the H200 for the near_dtype_max inputs, every family). Rows with
// |M| >= 2^16 therefore take the exact path: the product rounded first (FMUL), then M subtracted (FADD),
// as the CPU emulator does; rounding is monotonic, so the argument is <= 0 and exactly 0 at the max. The
// choice is per row and per key block (one compare): realistic rows never leave the one-FFMA path.
// The row sum l is kept per thread (this thread's columns only) and reduced across the quad once at the
// end: every lane of a quad applies the same rescale factors, so the partial sums stay consistent, and
// the loop saves two shuffles per row per block.
//
// Mutant switches (catalogue ids in brackets) sit on the one line where each bug would live.
#include "fa_params.h"
#include "fa_types.cuh"

namespace fa {

// 2^x with the hardware approximation (MUFU.EX2; rel. error ~2^-22, far below bf16/fp16 rounding).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// The exponential of an argument already in log2 units.
__device__ __forceinline__ float exp_of_log2_units(float x) {
#ifdef FA_MUTANT_EXP_BASE_MISMATCH
  return __expf(x);  // [exp-base-mismatch] argument scaled by log2(e) but exponentiated in base e
#else
  return exp2_approx(x);
#endif
}

// softmax_scale * log2(e), as every family reads it.
__device__ __forceinline__ float scale_log2_of(const AttentionParams& p) {
#ifdef FA_MUTANT_MISSING_SCALE
  return kLog2e;  // [missing-scale] the 1/sqrt(d) factor dropped
#else
  return p.softmax_scale_log2;
#endif
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// M of a row max m in log2 units (see the header comment); -inf stays -inf.
__device__ __forceinline__ float max_log2(float m, float scale_log2) {
  return __fmul_rn(m, scale_log2);
}

// Above this |M| the FFMA's rounding of M no longer cancels harmlessly (header comment): 2^16.
constexpr float kFfmaMaxLimit = 65536.f;
__device__ __forceinline__ bool needs_exact_exponent(float max_log2_units) {
  return fabsf(max_log2_units) >= kFfmaMaxLimit;
}

// 2^(s * scale_log2 - M) by the path chosen for the row: one FFMA, or FMUL then FADD (exact at the max).
template <bool kExact>
__device__ __forceinline__ float exp2_shifted(float s, float scale_log2, float max_log2_units) {
  if constexpr (kExact) return exp_of_log2_units(__fmul_rn(s, scale_log2) - max_log2_units);
  return exp_of_log2_units(fmaf(s, scale_log2, -max_log2_units));
}

// The max in log2 units that enters exp2 for a row whose running max is m. A row that has seen only
// masked scores keeps m = -inf; using 0 then makes every p = 2^(-inf) = 0 instead of 2^(-inf + inf) = NaN.
__device__ __forceinline__ float guarded_max_log2(float m, float scale_log2) {
#ifdef FA_MUTANT_MASKED_ROW_NAN
  return max_log2(m, scale_log2);  // [masked-row-nan] no guard: a fully masked row or tile gives NaN
#else
  return m == neg_inf() ? 0.f : max_log2(m, scale_log2);
#endif
}

// FP8 kernels round P as P * p_scale (a power of two). Folded into the exponent, 2^(x - M + log2 p_scale)
// costs nothing per element where the product P * p_scale costs an FMUL; the row sums are taken back to
// unscaled units once per row and block (exact: a power of two).
struct ScaledP {
  float log2_scale = 0.f;  // log2(p_scale)
  float inv_scale = 1.f;   // 1 / p_scale
};

// exp(m_part - m_merged): the factor that carries a sum or output kept against the raw max `part_max` to the
// (guarded, log2-unit) max `merged_max_log2`. THE rescale rule: the running (O, l) at a new key block
// (update), and partial states over disjoint key sets merged into one (fa2's FA-1 warp layout, flash_decode's
// splits). 0 for a part that saw no key (m = -inf).
__device__ __forceinline__ float part_weight(float part_max, float merged_max_log2, float scale_log2) {
  return exp_of_log2_units(max_log2(part_max, scale_log2) - merged_max_log2);
}

template <int kMT>
struct OnlineSoftmax {
  static constexpr int kRows = 2 * kMT;
  float row_max[kRows];  // running max of raw scores, quad-uniform
  float row_sum[kRows];  // running sum of p over this thread's columns (quad-partial)

  __device__ __forceinline__ void init() {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#ifdef FA_MUTANT_M_INIT_ZERO
      row_max[r] = 0.f;  // [m-init-zero] running max starts at 0 instead of -inf
#else
      row_max[r] = neg_inf();
#endif
      row_sum[r] = 0.f;
    }
  }

  // s (one 16-row tile) becomes p in place for half h of its rows; returns this thread's partial row sum.
  // kSumFromFirstP (FP8): the sum starts at the first p, not at 0 + p: the same value (p = 2^x is never -0),
  // one FADD less per row and block.
  template <bool kExact, int kNT, bool kSumFromFirstP = false>
  __device__ __forceinline__ static float exponentiate_row(float (&s)[kNT][4], int h, float scale_log2,
                                                           float max_log2_units) {
    float sum = 0.f;
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& x = s[nt][2 * h + e];
        x = exp2_shifted<kExact>(x, scale_log2, max_log2_units);
        if constexpr (kSumFromFirstP) {
          if (nt == 0 && e == 0)
            sum = x;
          else
            sum += x;
        } else {
          sum += x;
        }
      }
    }
    return sum;
  }

  // The max of half h's 2 kNT scores as a balanced tree (FP8): max is exact and its order does not change
  // the value (max.f32 drops a NaN operand; a zero max of either sign gives the same p, factors and LSE), and
  // the dependent chain per row is 1 + log2(kNT) deep instead of 1 + kNT (the ordered loop in update): with
  // the running max, 6 FMNMX instead of 17 at kBlockN 128, the same 2 kNT in all.
  template <int kNT>
  __device__ __forceinline__ static float tree_max(const float (&s)[kNT][4], int h) {
    float v[kNT];
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) v[nt] = fmaxf(s[nt][2 * h], s[nt][2 * h + 1]);
#pragma unroll
    for (int width = 1; width < kNT; width *= 2)
#pragma unroll
      for (int nt = 0; nt + width < kNT; nt += 2 * width) v[nt] = fmaxf(v[nt], v[nt + width]);
    return v[0];
  }

  // Every row of this thread: p in place, the partial sums in `sums`.
  template <bool kExact, int kNT, bool kSumFromFirstP = false>
  __device__ __forceinline__ static void exponentiate(float (&s)[kMT][kNT][4],
                                                      const float (&p_max_log2)[kRows], float scale_log2,
                                                      float (&sums)[kRows]) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      sums[r] = exponentiate_row<kExact, kNT, kSumFromFirstP>(s[r / 2], r % 2, scale_log2, p_max_log2[r]);
  }

  // One key block: s (raw, masked scores; -inf where masked) becomes p = exp(s*scale - m_new) in place,
  // row_sum is rescaled to the new max and grows by the block's p, and `rescale` receives the factor
  // exp(m_old - m_new) that the unnormalised output must take before this block's P V is added (the caller
  // applies it with rescale_o: at once, or, when the previous block's P V is still running on the tensor
  // cores, once it has finished).
  // The exponent path is chosen once per warp and block (vote.any): a uniform branch around all rows.
  // Chosen per row, ptxas if-converted the small per-row bodies and issued both paths (FFMA and
  // FMUL+FADD, and their ex2): the forward lost 11-14% on the H200 (bf16 n4096: d64 308 -> 274, d128
  // 320 -> 277 TFLOP/s). A warp with one huge row now takes the exact path for all its rows (correct for
  // any row, one FADD more per element).
  // kScaledP (FP8): s becomes p * p_scale instead (ScaledP above); row_sum stays in units of p.
  template <int kNT, bool kScaledP = false>
  __device__ __forceinline__ void update(float (&s)[kMT][kNT][4], float scale_log2, float (&rescale)[kRows],
                                         ScaledP scaled_p = {}) {
    float p_max_log2[kRows];
    bool exact = false;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int mt = r / 2, h = r % 2;
      float block_max = row_max[r];
      if constexpr (kScaledP) {
        block_max = fmaxf(block_max, tree_max(s[mt], h));
      } else {
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
          block_max = fmaxf(block_max, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
      }
      block_max = quad_max(block_max);
      const float new_max_log2 = guarded_max_log2(block_max, scale_log2);
      // The old max is not guarded: m_old = -inf (nothing seen yet) must give rescale 2^(-inf) = 0,
      // also when the new max is -inf too (then -inf - 0). Guarding it to 0 would give 2^(-new), which
      // overflows to inf for a row of very negative scores and turns 0 * inf into NaN.
      rescale[r] = part_weight(row_max[r], new_max_log2, scale_log2);
#ifdef FA_MUTANT_STALE_MAX
      // [stale-max] P computed with the previous running max
      p_max_log2[r] = guarded_max_log2(row_max[r], scale_log2);
#else
      p_max_log2[r] = new_max_log2;
#endif
      row_max[r] = block_max;
      exact = exact || needs_exact_exponent(p_max_log2[r]);
      if constexpr (kScaledP) p_max_log2[r] -= scaled_p.log2_scale;
    }
    float sums[kRows];
    if (__any_sync(0xffffffffu, exact))
      exponentiate<true, kNT, kScaledP>(s, p_max_log2, scale_log2, sums);
    else
      exponentiate<false, kNT, kScaledP>(s, p_max_log2, scale_log2, sums);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if constexpr (kScaledP) sums[r] *= scaled_p.inv_scale;
#ifdef FA_MUTANT_UNRESCALED_L
      row_sum[r] += sums[r];  // [unrescaled-l] l not multiplied by exp(m_old - m_new)
#else
      row_sum[r] = fmaf(row_sum[r], rescale[r], sums[r]);
#endif
    }
  }

  // o (the unnormalised output, kDT 8-column tiles) times the factors of update().
  template <int kDT>
  __device__ __forceinline__ static void rescale_o(float (&o)[kMT][kDT][4], const float (&rescale)[kRows]) {
#ifndef FA_MUTANT_UNRESCALED_O  // [unrescaled-o] O not multiplied by exp(m_old - m_new)
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        o[r / 2][dt][2 * (r % 2)] *= rescale[r];
        o[r / 2][dt][2 * (r % 2) + 1] *= rescale[r];
      }
    }
#endif
  }

  // update() and rescale_o() at once: the families whose previous P V has finished by the softmax.
  template <int kNT, int kDT>
  __device__ __forceinline__ void step(float (&s)[kMT][kNT][4], float (&o)[kMT][kDT][4], float scale_log2) {
    float rescale[kRows];
    update(s, scale_log2, rescale);
    rescale_o(o, rescale);
  }
};

}  // namespace fa
