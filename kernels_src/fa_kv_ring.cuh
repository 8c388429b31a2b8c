#pragma once
// The forward mainloop's load ring (fa2_sm80, fa2_fp8): K and V blocks stream through kStages shared-memory
// slots each, filled by cp.async, and the key blocks are walked from the last to the first so that the
// blocks that need a mask (causal diagonal, tail) come first. Iteration j handles key block
// n_blocks - 1 - j in slot j % kStages.
//
// Copies are committed in the order {Q, K_0}, V_0, K_1, V_1, ...: at iteration j the V of block
// j + kStages - 1 is issued once K_j has landed (before S = Q K_j^T), the K of block j + kStages once V_j has
// landed (before the softmax and P V). With kStages = 1 the V load overlaps Q K^T and the next K load the
// softmax and P V (FlashAttention-2's schedule); deeper rings prefetch further ahead. Empty groups keep
// the count uniform, so one wait depth serves every iteration.
//
// Operand policy: T = a 16-bit element (rows of kRowBytes / 2 elements, fa_copy.cuh's tiles) or unsigned
// char (FP8 byte rows, fa_fp8.cuh's tiles).
#include "fa_copy.cuh"
#include "fa_fp8_tiles.cuh"
#include "fa_params.h"

namespace fa {

// Rows [0, kRows) of an (N, D) slice of T into the swizzled tile the operand's ldmatrix reads.
template <int kRows, int kRowBytes, int kThreads, typename T>
__device__ __forceinline__ void load_operand_tile(unsigned smem_tile, const T* gmem, long long row_stride,
                                                  int rows_valid, int tid) {
  if constexpr (sizeof(T) == 1) {
    load_fp8_tile_async<kRows, kRowBytes, kThreads>(smem_tile, gmem, row_stride, rows_valid, tid);
  } else {
    load_tile_async<kRows, kRowBytes / 2, kThreads>(smem_tile, gmem, row_stride, rows_valid, tid);
  }
}

template <typename T, int kBlockN, int kRowBytes, int kThreads, int kStages>
struct KvRingLastToFirst {
  static constexpr int kTileBytes = kBlockN * kRowBytes;
  const AttentionParams& p;
  const T* k;  // the (batch, kv head) slices
  const T* v;
  unsigned s_k, s_v;  // kStages tiles each
  int n_blocks, tid;

  __device__ __forceinline__ int block_of(int j) const { return n_blocks - 1 - j; }
  __device__ __forceinline__ unsigned k_slot(int j) const { return s_k + (j % kStages) * kTileBytes; }
  __device__ __forceinline__ unsigned v_slot(int j) const { return s_v + (j % kStages) * kTileBytes; }

  __device__ __forceinline__ void load_k(int j) const {
    const int nb = n_blocks - 1 - j;
    load_operand_tile<kBlockN, kRowBytes, kThreads>(s_k + (j % kStages) * kTileBytes,
                                                    k + nb * kBlockN * p.k_row_stride, p.k_row_stride,
                                                    p.seqlen_k - nb * kBlockN, tid);
  }
  __device__ __forceinline__ void load_v(int j) const {
    const int nb = n_blocks - 1 - j;
    load_operand_tile<kBlockN, kRowBytes, kThreads>(s_v + (j % kStages) * kTileBytes,
                                                    v + nb * kBlockN * p.v_row_stride, p.v_row_stride,
                                                    p.seqlen_k - nb * kBlockN, tid);
  }

  // Groups {Q, K_0}, V_0, K_1, ..., V_{S-2}, K_{S-1}: called after the Q tile's copies are issued.
  __device__ __forceinline__ void prologue() const {
    if (n_blocks > 0) load_k(0);
    cp_async_commit();
#pragma unroll
    for (int s = 1; s < kStages; ++s) {
      if (s - 1 < n_blocks) load_v(s - 1);
      cp_async_commit();
      if (s < n_blocks) load_k(s);
      cp_async_commit();
    }
  }

  // Opens iteration j: K_j landed (this thread's copies, then everyone's: V_{j-1}'s slot is free again),
  // and the V of block j + kStages - 1 is issued.
  __device__ __forceinline__ void wait_k_issue_v(int j) const {
    cp_async_wait<2 * (kStages - 1)>();
    __syncthreads();
    if (j + kStages - 1 < n_blocks) load_v(j + kStages - 1);
    cp_async_commit();
  }
  // Before the softmax of iteration j: V_j landed and every warp is done with K_j's slot, into which the K
  // of block j + kStages is issued.
  __device__ __forceinline__ void wait_v_issue_k(int j) const {
    cp_async_wait<2 * (kStages - 1)>();
    __syncthreads();
    if (j + kStages < n_blocks) load_k(j + kStages);
    cp_async_commit();
  }
};

}  // namespace fa
