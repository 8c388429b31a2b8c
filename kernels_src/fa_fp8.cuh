#pragma once
// FP8 pieces of the forward kernels (fa2_fp8_fwd.cu, fa3_sm90): byte tiles in shared memory
// (fa_fp8_tiles.cuh), mma.sync m16n8k32 dispatch on the element type, P quantised with saturation, V
// fragments transposed in registers, and the descale factors (fa_params.h).
#include "fa_fp8_tiles.cuh"
#include "fa_mma.cuh"
#include "fa_params.h"
#include "fa_types.cuh"

namespace fa {

template <typename Element>
struct Fp8Traits;

template <>
struct Fp8Traits<__nv_fp8_e4m3> {
  static constexpr float kMaxFinite = 448.f;
  static __device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                             unsigned b1) {
    mma_16832_e4m3(d, a, b0, b1);
  }
  // Two floats to two codes, saturating (as __nv_cvt_float_to_fp8 with __NV_SATFINITE on the host):
  // `lo` in the low byte. PTX puts its first source in the high byte.
  static __device__ __forceinline__ unsigned short cvt2(float lo, float hi) {
    unsigned short r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
  }
};

template <>
struct Fp8Traits<__nv_fp8_e5m2> {
  static constexpr float kMaxFinite = 57344.f;
  static __device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                             unsigned b1) {
    mma_16832_e5m2(d, a, b0, b1);
  }
  static __device__ __forceinline__ unsigned short cvt2(float lo, float hi) {
    unsigned short r;
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;\n" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
  }
};

// Four floats (x0 in the lowest byte) to one register of four codes.
template <typename Element>
__device__ __forceinline__ unsigned pack_fp8x4(float x0, float x1, float x2, float x3) {
  const unsigned lo = Fp8Traits<Element>::cvt2(x0, x1);
  const unsigned hi = Fp8Traits<Element>::cvt2(x2, x3);
  return lo | (hi << 16);
}

// Byte permute: result byte i = byte sel_i of the pair (b:a), a's bytes numbered 0-3, b's 4-7.
__device__ __forceinline__ unsigned byte_perm(unsigned a, unsigned b, unsigned selector) {
  unsigned r;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(r) : "r"(a), "r"(b), "r"(selector));
  return r;
}
// From two ldmatrix.trans registers r0 = {V[2c][2g], V[2c][2g+1], V[2c+1][2g], V[2c+1][2g+1]} (keys 2c, 2c+1
// of one 8-key group) and r1 (the same for the next 8 keys): the keys 2c, 2c+1, 8+2c, 9+2c of column 2g
// (kEvenColumns) or 2g+1, four codes of one B-operand register.
constexpr unsigned kPermEvenColumns = 0x6420;
constexpr unsigned kPermOddColumns = 0x7531;

// FP8 descale factors (fa_params.h: per tensor, or one per descale_block_rows rows of each (batch, head)
// matrix). The K factor goes through one function so that its mutant sits on one line for every mode.
__device__ __forceinline__ float k_descale_factor(float k_descale) {
#ifdef FA_MUTANT_FP8_MISSING_DESCALE
  return 1.f;  // [fp8-missing-descale] the descale factor of K dropped from the score scale
#else
  return k_descale;
#endif
}

// Block descale of `row` (clamped into [0, rows): padding rows read the last block) of matrix `matrix`.
__device__ __forceinline__ float block_descale(const float* blocks, int matrix, int row, int rows,
                                               int block_rows) {
  const int blocks_per_matrix = (rows + block_rows - 1) / block_rows;
  const int r = row < rows ? row : rows - 1;
  return blocks[matrix * blocks_per_matrix + r / block_rows];
}

// The scale P is multiplied by before it is rounded to FP8 (a power of two: numerics' probability_scale,
// 2^8; it cancels exactly in O = (P V) / (l p_scale)).
template <typename Element>
__device__ __forceinline__ float p_scale_of(const AttentionParams& p) {
#ifdef FA_MUTANT_FP8_P_OVERFLOW
  // [fp8-p-overflow] the emulator's mutant scale: 64 x the format's maximum rounded up to a power of two
  // (e4m3 2^15, e5m2 2^22): every weight above 1/64 of the row maximum saturates, l does not.
  return exp2f(ceilf(log2f(64.f * Fp8Traits<Element>::kMaxFinite)));
#else
  return p.p_scale;
#endif
}

// Per-block descale of one key block's scores (fa2_fp8's mma.sync C fragments, kNT 8-key tiles from key
// n0): S *= q_descale(row) * k_descale(col), one K factor per 32 keys (descale_block_rows % 32 == 0).
template <int kMT, int kNT>
__device__ __forceinline__ void descale_scores_by_block(float (&s)[kMT][kNT][4],
                                                        const float (&q_descale_rows)[2 * kMT],
                                                        const AttentionParams& p, int kv_matrix, int n0) {
#pragma unroll
  for (int g32 = 0; g32 < kNT / 4; ++g32) {
    const float kd = k_descale_factor(
        block_descale(p.k_descale_blocks, kv_matrix, n0 + 32 * g32, p.seqlen_k, p.descale_block_rows));
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 4 * g32; nt < 4 * g32 + 4; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] *= q_descale_rows[2 * mt + e / 2] * kd;
  }
}

// Per-block V descale inside P V: O is accumulated in units of the current V factor; when the 32-key
// k-step from `key` enters a block with another factor (uniform over the CTA, rare), O moves to its units.
template <int kMT, int kDT>
__device__ __forceinline__ void enter_v_descale_block(float (&o)[kMT][kDT][4], float& v_descale_now,
                                                      const AttentionParams& p, int kv_matrix, int key) {
  const float vd = block_descale(p.v_descale_blocks, kv_matrix, key, p.seqlen_k, p.descale_block_rows);
  if (vd != v_descale_now) {
    const float ratio = v_descale_now / vd;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[mt][dt][e] *= ratio;
    v_descale_now = vd;
  }
}

}  // namespace fa
