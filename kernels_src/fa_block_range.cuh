#pragma once
// Which key blocks a query block visits, and which of them need a mask. Every forward family walks the
// key blocks [0, count) (fa2/fa3 from the last to the first, so the masked blocks come first).
//
// Causal masks are bottom-right aligned (FlashAttention 2.1+): query row i sees key j when
// j <= i + (n_k - n_q). A query block's last row sees the most keys; a block whose last row sees none
// (n_q > n_k, rows above the diagonal) visits no key block and writes O = 0, LSE = -inf.

namespace fa {

// Key blocks of kBlockN keys that query rows [m0, m0 + rows) visit.
template <bool Is_causal>
__device__ __forceinline__ int key_block_count(int m0, int rows, int block_n, int seqlen_q, int seqlen_k) {
  int count = (seqlen_k + block_n - 1) / block_n;
  if (Is_causal) {
    const int last_visible = m0 + rows - 1 + (seqlen_k - seqlen_q);  // may be negative: no block at all
    count = min(count, last_visible < 0 ? 0 : last_visible / block_n + 1);
  }
  return count;
}

// The first key that row `first_row` may not see (n_k without a causal mask): key blocks ending at or
// before it need no mask for any row at or after first_row.
template <bool Is_causal>
__device__ __forceinline__ int unmasked_key_limit(int first_row, int seqlen_q, int seqlen_k) {
  return Is_causal ? min(seqlen_k, first_row + (seqlen_k - seqlen_q) + 1) : seqlen_k;
}

__device__ __forceinline__ bool key_block_needs_mask(int block, int block_n, int unmasked_limit) {
  return (block + 1) * block_n > unmasked_limit;
}

}  // namespace fa
