#pragma once
// FP8 pieces of the forward kernels (fa2_fp8_fwd.cu): byte tiles in shared memory, mma.sync m16n8k32
// dispatch on the element type, P quantised with saturation, V fragments transposed in registers, and
// the descale factors (fa_params.h).
//
// Byte tiles: a row of D FP8 values is D / 16 chunks of 16 bytes. D >= 128 uses fa_copy.cuh's swizzle
// (chunk ^ row within 128-byte groups). D = 64 has 4 chunks per row, so two rows share a 128-byte line:
// chunk c of row r goes to chunk c ^ ((r >> 1) & 3); 8 consecutive rows at one logical chunk then land
// in 8 different 16-byte bank groups ((r & 1) picks the half line, (r >> 1) & 3 the chunk), so every
// ldmatrix 8x8 matrix is still one conflict-free wavefront.
#include "fa_copy.cuh"
#include "fa_mma.cuh"
#include "fa_params.h"
#include "fa_types.cuh"

namespace fa {

template <int kChunks>
__device__ __forceinline__ int fp8_swizzled_offset(int row, int chunk) {
  static_assert(kChunks == 4 || kChunks % 8 == 0, "64-byte rows or whole 128-byte groups");
  if constexpr (kChunks == 4) {
    return row * 64 + ((chunk ^ ((row >> 1) & 3)) * 16);
  } else {
    return swizzled_offset<kChunks>(row, chunk);
  }
}

// Byte offset of logical chunk `chunk` (a compile-time constant in the unrolled loops) inside a row r of
// a swizzled byte tile, for a lane whose row satisfies r % 8 = row_mod8 (every fragment row base is a
// multiple of 8).
template <int kChunks>
__device__ __forceinline__ int fp8_chunk_offset(int row_mod8, int chunk) {
  if constexpr (kChunks == 4) {
    return (chunk ^ (row_mod8 >> 1)) * 16;
  } else {
    return ((chunk & ~7) | ((chunk ^ row_mod8) & 7)) * 16;
  }
}

// fa_copy.cuh's load_tile_async for byte rows: rows [0, kRows) x kRowBytes of a (N, D) FP8 slice into a
// swizzled shared tile, rows at or past rows_valid zero-filled (zero codes: zero scores that the mask
// removes, zero values that add nothing to P.V).
template <int kRows, int kRowBytes, int kThreads>
__device__ __forceinline__ void load_fp8_tile_async(unsigned smem_tile, const unsigned char* gmem,
                                                    long long row_stride, int rows_valid, int tid) {
  constexpr int kChunks = kRowBytes / 16;
  constexpr int kTotal = kRows * kChunks;
  static_assert(kTotal % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kTotal / kThreads; ++i) {
    const int idx = i * kThreads + tid;
    const int row = idx / kChunks;
    const int chunk = idx % kChunks;
    const bool valid = row < rows_valid;
    const unsigned char* src = gmem + (valid ? row * row_stride : 0) + chunk * 16;
    cp_async_16(smem_tile + fp8_swizzled_offset<kChunks>(row, chunk), src, valid ? 16 : 0);
  }
}

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

}  // namespace fa
