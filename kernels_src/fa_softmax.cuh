#pragma once
// Online softmax over the score tiles a thread holds in mma.sync C-fragment layout.
//
// A thread holds kMT 16-row tiles; in each it owns rows g and g+8 (g = lane / 4) and, across the quad of
// lanes 4g..4g+3, the columns of those rows. Row r = 2 * mt + h (h = 0 for row g, 1 for row g+8);
// s[mt][nt][2h + e] is (row, column 8 nt + 2c + e).
//
// Scores stay in raw units (Q.K); scale * log2(e) is applied inside one FFMA per element before ex2:
//   p = 2^(s * scale_log2 - M),   rescale = 2^(M_old - M_new),   M = m * scale_log2 rounded UP.
// Why rounded up: the FFMA forms s * scale_log2 exactly and rounds once, so for s = m the argument is
// exact(m * scale_log2) - M. With M rounded to nearest that difference is up to half an ulp of M, and at
// the scores of fp16/bf16 inputs near their maximum (|s| ~ 1e10 in log2 units, ulp 1024) 2^(+512)
// overflowed to inf (seen on the H200 for the near_dtype_max input family in every family). Rounded up,
// the argument is <= 0 for every s <= m, so p <= 1 always; which M is used does not matter otherwise,
// as long as every use of one row's max (p, rescale, LSE) uses the same M.
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

// M of a row max m in log2 units, rounded up (see the header comment); -inf stays -inf.
__device__ __forceinline__ float max_log2(float m, float scale_log2) {
  return __fmul_ru(m, scale_log2);
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

  // One key block: s (raw, masked scores; -inf where masked) becomes p = exp(s*scale - m_new) in place;
  // o (the unnormalised output, kDT 8-column tiles) and row_sum are rescaled to the new max.
  template <int kNT, int kDT>
  __device__ __forceinline__ void step(float (&s)[kMT][kNT][4], float (&o)[kMT][kDT][4], float scale_log2) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = 2 * mt + h;
        float block_max = row_max[r];
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
          block_max = fmaxf(block_max, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
        block_max = quad_max(block_max);
        const float new_max_log2 = guarded_max_log2(block_max, scale_log2);
        // The old max is not guarded: m_old = -inf (nothing seen yet) must give rescale 2^(-inf) = 0,
        // also when the new max is -inf too (then -inf - 0). Guarding it to 0 would give 2^(-new), which
        // overflows to inf for a row of very negative scores and turns 0 * inf into NaN.
        const float rescale = exp_of_log2_units(max_log2(row_max[r], scale_log2) - new_max_log2);
#ifdef FA_MUTANT_STALE_MAX
        // [stale-max] P computed with the previous running max
        const float p_max_log2 = guarded_max_log2(row_max[r], scale_log2);
#else
        const float p_max_log2 = new_max_log2;
#endif
        row_max[r] = block_max;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float& x = s[mt][nt][2 * h + e];
            x = exp_of_log2_units(fmaf(x, scale_log2, -p_max_log2));
            sum += x;
          }
        }
#ifdef FA_MUTANT_UNRESCALED_L
        row_sum[r] += sum;  // [unrescaled-l] l not multiplied by exp(m_old - m_new)
#else
        row_sum[r] = fmaf(row_sum[r], rescale, sum);
#endif
#ifndef FA_MUTANT_UNRESCALED_O  // [unrescaled-o] O not multiplied by exp(m_old - m_new)
#pragma unroll
        for (int dt = 0; dt < kDT; ++dt) {
          o[mt][dt][2 * h] *= rescale;
          o[mt][dt][2 * h + 1] *= rescale;
        }
#endif
      }
    }
  }
};

}  // namespace fa
