#pragma once
// The tile scheduler of the persistent forward kernels: which (query block, head, batch) tiles a CTA
// computes, in which order. A CTA takes tiles blockIdx.x, blockIdx.x + gridDim.x, ... of one fixed order,
// so a grid of one CTA per tile (non-persistent) and a grid of one CTA per SM (persistent) run the same
// code.
//
// Full masks: the query blocks of one (batch, head) are consecutive, so the CTAs running at once share
// that head's K and V in L2 (d128 n8192: 132 CTAs cover about two heads, 8 MB of K/V, inside the 50 MB L2).
// Causal: longest processing time first. Query block m visits m + 1 key blocks, so the tiles are ordered
// by query block from the last to the first, all (batch, head) of one query block together; a CTA then
// takes one tile of each wave, from heavy to light, and the CTAs end within about one tile of each other.
// (Head-major order within a head, measured on the H200 at d64 n2048: 132 CTAs over 11 query blocks gave
// every CTA the same query block each time, 132 % 11 = 0, and the causal kernel took as long as the full
// one: 0.641 vs 0.640 ms.)

namespace fa {

struct Tile {
  int m_block;
  int head;
  int batch;
};

struct TileScheduler {
  int m_blocks;  // query blocks per (batch, head)
  int heads;
  int total;  // m_blocks * heads * batch

  __device__ __forceinline__ TileScheduler(int seqlen_q, int block_m, int heads_q, int batch)
      : m_blocks((seqlen_q + block_m - 1) / block_m), heads(heads_q), total(m_blocks * heads_q * batch) {}

  template <bool Is_causal>
  __device__ __forceinline__ Tile tile(int index) const {
    if constexpr (Is_causal) {
      const int bh_count = total / m_blocks;
      const int bh = index % bh_count;
      return Tile{m_blocks - 1 - index / bh_count, bh % heads, bh / heads};
    }
    const int bh = index / m_blocks;
    return Tile{index % m_blocks, bh % heads, bh / heads};
  }
};

}  // namespace fa
