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
//
// A static walk gives each CTA every gridDim.x-th tile whatever the others do, and causal tiles differ in
// work by up to n / kBlockN times: measured on the H200 (d128 128 x 128 bf16 n8192 causal), the static
// persistent walk ran 576 TFLOP/s against 627 for one CTA per tile. TileCounter is the dynamic order of
// FlashAttention-3's causal scheduler: the first wave takes tiles blockIdx.x, and every CTA that finishes
// a tile takes the next one of the same longest-first order from a global counter, so the CTAs end
// within one light tile of each other.

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

// Two ints of global memory: [0] tiles handed out after the first wave, [1] CTAs that have taken their
// last (past-the-end) index. Zero when a launch starts: the host zeroes them once at allocation, and the
// last CTA to finish zeroes them for the next launch (every CTA has taken its last index by then, so no
// increment can follow the reset).
struct TileCounter {
  int* counters;

  // The index after a CTA's current tile (one thread per CTA).
  __device__ __forceinline__ int next() const { return int(gridDim.x) + atomicAdd(counters, 1); }
  // After the CTA's last next() (one thread per CTA).
  __device__ __forceinline__ void retire() const {
    if (atomicAdd(counters + 1, 1) == int(gridDim.x) - 1) {
      atomicExch(counters, 0);
      atomicExch(counters + 1, 0);
    }
  }
};

}  // namespace fa
