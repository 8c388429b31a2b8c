#pragma once
// Masks on score tiles in mma.sync C-fragment layout (see fa_softmax.cuh for the register map).
//
// Two reasons a score is removed (set to -inf before the softmax):
//   tail:   key column >= n_k (the zero-filled padding of the last, partial key block);
//   causal: key column > query row + (n_k - n_q)  (bottom-right aligned, as FlashAttention 2.1+).
// Callers apply it only to the blocks that can hold such a key (the diagonal and tail blocks); the
// other blocks skip it, which is most of the work at large n.
#include "fa_types.cuh"

namespace fa {

// First key column that query `row` may not see; every column at or past it is masked.
template <bool Is_causal>
__device__ __forceinline__ int key_limit(int row, int seqlen_k, int causal_offset) {
#ifdef FA_MUTANT_TAIL_UNMASKED
  const int tail_limit = 0x7fffffff;  // [tail-unmasked] padding keys past n_k scored as 0, not masked
#else
  const int tail_limit = seqlen_k;
#endif
  if (!Is_causal) return tail_limit;
#ifdef FA_MUTANT_CAUSAL_DIAGONAL
  const int causal_limit = row + causal_offset + 2;  // [causal-diagonal] off by one: also sees the next key
#else
  const int causal_limit = row + causal_offset + 1;
#endif
  return min(tail_limit, causal_limit);
}

// s[mt][nt][2h+e] covers query row query_row[2 mt + h] and key column col0 + 8 nt + e, where col0 is this
// thread's first column (…+ 2c). The rows need not be consecutive: flash_decode packs the query heads of a
// GQA group into one tile.
template <bool Is_causal, int kMT, int kNT>
__device__ __forceinline__ void apply_mask_to_rows(float (&s)[kMT][kNT][4], const int (&query_row)[2 * kMT],
                                                   int col0, int seqlen_k, int causal_offset) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int limit = key_limit<Is_causal>(query_row[2 * mt + h], seqlen_k, causal_offset) - col0;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (8 * nt + e >= limit) s[mt][nt][2 * h + e] = neg_inf();
        }
      }
    }
  }
}

// The same for consecutive rows: row r = 2 mt + h is query row row0 + 16 mt + 8 h (row0: this thread's
// first row, …+ g).
template <bool Is_causal, int kMT, int kNT>
__device__ __forceinline__ void apply_mask(float (&s)[kMT][kNT][4], int row0, int col0, int seqlen_k,
                                           int causal_offset) {
  int query_row[2 * kMT];
#pragma unroll
  for (int r = 0; r < 2 * kMT; ++r) query_row[r] = row0 + 16 * (r / 2) + 8 * (r % 2);
  apply_mask_to_rows<Is_causal>(s, query_row, col0, seqlen_k, causal_offset);
}

}  // namespace fa
