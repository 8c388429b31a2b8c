#pragma once
// FP8 byte tiles in shared memory (fa2_fp8, fa3_sm90's FP8 path): the swizzle of a row of D one-byte codes
// and its cp.async load. No mutant switch lives here, so the 16-bit families may include it (fa_kv_ring.cuh).
//
// Byte tiles: a row of D FP8 values is D / 16 chunks of 16 bytes. D >= 128 uses fa_copy.cuh's swizzle
// (chunk ^ row within 128-byte groups). D = 64 has 4 chunks per row, so two rows share a 128-byte line:
// chunk c of row r goes to chunk c ^ ((r >> 1) & 3); 8 consecutive rows at one logical chunk then land
// in 8 different 16-byte bank groups ((r & 1) picks the half line, (r >> 1) & 3 the chunk), so every
// ldmatrix 8x8 matrix is still one conflict-free wavefront.
#include "fa_copy.cuh"

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

}  // namespace fa
