#pragma once
// The tile scheduler of the persistent forward kernels: which (query block, head, batch) tiles a CTA
// computes, in which order. A CTA takes tiles blockIdx.x, blockIdx.x + gridDim.x, ... of one fixed order,
// so a grid of one CTA per tile (non-persistent) and a grid of one CTA per SM (persistent) run the same
// code.
//
// Order: the query blocks of one (batch, head) are consecutive, so the CTAs running at once share that
// head's K and V in L2 (d128 n8192: 132 CTAs cover about two heads, 8 MB of K/V, well inside the 50 MB L2).
// Causal: within a head the query blocks go last to first, so each CTA's first tiles are the long ones
// (the last query block visits every key block) and the short ones fill the end: a static approximation
// of longest-processing-time-first.

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
    const int m = index % m_blocks;
    const int bh = index / m_blocks;
    return Tile{Is_causal ? m_blocks - 1 - m : m, bh % heads, bh / heads};
  }
};

}  // namespace fa
