#pragma once
// Which key blocks a query block visits, and which of them need a mask. Every forward family walks the
// key blocks [0, count) (fa2/fa3 from the last to the first, so the masked blocks come first); the
// backward's dQ pass walks the same range.
//
// Causal masks are bottom-right aligned (FlashAttention 2.1+): query row i sees key j when
// j <= i + (n_k - n_q). A query block's last row sees the most keys; a block whose last row sees none
// (n_q > n_k, rows above the diagonal) visits no key block and writes O = 0, LSE = -inf.
//
// Each rule is written once, on KeyRange (n_k and the causal offset n_k - n_q that the kernels hold
// anyway); the (seqlen_q, seqlen_k) forms compute the offset and call it. The sm80 kernels pass
// {p.seqlen_k, causal_offset} where the call stands: where a parameter is read changes the code ptxas
// makes (fa1's causal step came out with 8 registers fewer when n_k was read once at the top, CUDA 13.0).

namespace fa {

struct KeyRange {
  int seqlen_k;       // n_k
  int causal_offset;  // n_k - n_q
};

// Key blocks of kBlockN keys that query rows [m0, m0 + kRows) visit.
template <bool Is_causal, int kRows, int kBlockN>
__device__ __forceinline__ int key_block_count(int m0, KeyRange keys) {
  int count = (keys.seqlen_k + kBlockN - 1) / kBlockN;
  if (Is_causal) {
    const int last_visible = m0 + kRows - 1 + keys.causal_offset;  // may be negative: no block at all
    count = min(count, last_visible < 0 ? 0 : last_visible / kBlockN + 1);
  }
  return count;
}
template <bool Is_causal>
__device__ __forceinline__ int key_block_count(int m0, int rows, int block_n, int seqlen_q, int seqlen_k) {
  int count = (seqlen_k + block_n - 1) / block_n;
  if (Is_causal) {
    const int last_visible = m0 + rows - 1 + (seqlen_k - seqlen_q);
    count = min(count, last_visible < 0 ? 0 : last_visible / block_n + 1);
  }
  return count;
}

// Whether rows [m0, m0 + rows) see any key of key block `block` (one launch per key block: fa1_fwd):
// block < key_block_count, stated for one block.
template <bool Is_causal>
__device__ __forceinline__ bool key_block_visible(int block, int m0, int rows, int block_n, KeyRange keys) {
  return !(Is_causal && block * block_n > m0 + rows - 1 + keys.causal_offset);
}

// The first key that row `first_row` may not see (n_k without a causal mask): key blocks ending at or
// before it need no mask for any row at or after first_row.
template <bool Is_causal>
__device__ __forceinline__ int unmasked_key_limit(int first_row, KeyRange keys) {
  return Is_causal ? min(keys.seqlen_k, first_row + keys.causal_offset + 1) : keys.seqlen_k;
}
template <bool Is_causal>
__device__ __forceinline__ int unmasked_key_limit(int first_row, int seqlen_q, int seqlen_k) {
  return unmasked_key_limit<Is_causal>(first_row, KeyRange{seqlen_k, seqlen_k - seqlen_q});
}

__device__ __forceinline__ bool key_block_needs_mask(int block, int block_n, int unmasked_limit) {
  return (block + 1) * block_n > unmasked_limit;
}

// The backward's view, from the keys: the first query block of kBlockM rows with a row that sees key n0
// (row i sees n0 when i + causal_offset >= n0); 0 without a causal mask.
template <bool Is_causal, int kBlockM>
__device__ __forceinline__ int first_query_block(int n0, int causal_offset) {
  return Is_causal ? max(0, (n0 - causal_offset) / kBlockM) : 0;
}

}  // namespace fa
