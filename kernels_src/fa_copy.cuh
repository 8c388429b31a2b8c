#pragma once
// Global -> shared tile loads with cp.async (16 bytes per thread per instruction), into a swizzled layout
// that ldmatrix reads without bank conflicts.
//
// Swizzle: a tile row of D 16-bit elements is D/8 chunks of 16 bytes. Chunk c of row r is stored at chunk
// (c & ~7) | ((c ^ r) & 7): within every 128-byte group the 8 chunks are permuted by the row's low 3 bits.
// ldmatrix makes 8 lanes read 8 consecutive rows at the same logical chunk; after the XOR they land in
// 8 different 16-byte bank groups, so each 8x8 matrix is one conflict-free wavefront (a plain layout
// with a 128- or 256-byte row stride would put all 8 rows in the same banks: an 8-way conflict).
#include "fa_types.cuh"

namespace fa {

// Byte offset of (row, chunk) in a swizzled tile whose rows hold kChunks 16-byte chunks.
template <int kChunks>
__device__ __forceinline__ int swizzled_offset(int row, int chunk) {
  static_assert(kChunks % 8 == 0, "a swizzled row spans whole 128-byte groups");
  return (row * kChunks + ((chunk & ~7) | ((chunk ^ row) & 7))) * 16;
}

// 16-byte async copy; src_bytes = 0 fills the destination with zeros (rows past the end of a sequence:
// zero keys give zero scores that the mask then removes, zero values keep NaN garbage out of P.V).
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}
// cp_async_wait<pending> for a count known only at run time (fa1's rolled chunk loop): a chain of uniform
// compares, at most kMax + 1 (it folds to the one wait where the count is a constant). Counts above kMax
// wait for kMax.
template <int kMax>
__device__ __forceinline__ void cp_async_wait_at_most(int pending) {
  if constexpr (kMax > 0) {
    if (pending >= kMax) {
      cp_async_wait<kMax>();
      return;
    }
    cp_async_wait_at_most<kMax - 1>(pending);
  } else {
    cp_async_wait<0>();
  }
}

// Copies rows [0, kRows) x D into a swizzled shared tile; row r comes from row_address(r) (a const Element*
// to its first element), rows at or past `rows_valid` (>= 1) are zero-filled. All kThreads threads take part.
// kRolled keeps the loop rolled: each chunk's addresses are recomputed (a few integer ops) instead of held
// in registers across the caller's loop. For one warp copying 8 KiB tiles (flash_decode: 16 chunks per
// lane per tile) the unrolled loop held ~100 registers of addresses and d256 spilled 184 bytes.
template <int kRows, int kHeadDim, int kThreads, typename Element, bool kRolled = false, typename RowAddress>
__device__ __forceinline__ void load_rows_async(unsigned smem_tile, RowAddress&& row_address, int rows_valid,
                                                int tid) {
  constexpr int kChunks = kHeadDim * int(sizeof(Element)) / 16;
  constexpr int kTotal = kRows * kChunks;
  static_assert(kTotal % kThreads == 0, "every thread copies the same number of chunks");
  constexpr int kElemsPerChunk = 16 / int(sizeof(Element));
  auto copy_chunk = [&](int i) {
    const int idx = i * kThreads + tid;
    const int row = idx / kChunks;  // consecutive threads walk one row: coalesced 16-byte loads
    const int chunk = idx % kChunks;
    const bool valid = row < rows_valid;
    // An invalid row still needs a legal address: the slice's first row. (Selecting the row index instead
    // of the address cost fa2_sm80's d128 causal 128x32 forward a spill at 255 registers under NVRTC 13.0.)
    const Element* src = (valid ? row_address(row) : row_address(0)) + chunk * kElemsPerChunk;
    cp_async_16(smem_tile + swizzled_offset<kChunks>(row, chunk), src, valid ? 16 : 0);
  };
  if constexpr (kRolled) {
#pragma unroll 1
    for (int i = 0; i < kTotal / kThreads; ++i) copy_chunk(i);
  } else {
#pragma unroll
    for (int i = 0; i < kTotal / kThreads; ++i) copy_chunk(i);
  }
}

// Rows [0, kRows) of a (N, D) slice with row stride `row_stride` (elements).
template <int kRows, int kHeadDim, int kThreads, bool kRolled = false, typename Element>
__device__ __forceinline__ void load_tile_async(unsigned smem_tile, const Element* gmem, long long row_stride,
                                                int rows_valid, int tid) {
  load_rows_async<kRows, kHeadDim, kThreads, Element, kRolled>(
      smem_tile, [gmem, row_stride](int row) -> const Element* { return gmem + row * row_stride; },
      rows_valid, tid);
}

}  // namespace fa
