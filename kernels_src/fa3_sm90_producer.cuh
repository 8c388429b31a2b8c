#pragma once
// fa3_sm90 forward, the producer warpgroup: one thread issues every TMA copy of the CTA (with kTransposeV,
// warps 1..3 then transpose the staged V tiles: fa3_sm90_v_transpose_smem.cuh).
#include "fa3_sm90_layout.cuh"
#include "fa_tma.cuh"
#include "fa_tma_params.h"

namespace fa3 {

// One tile of kRows rows starting at `row` into `dst`, one box per panel (Tile: Cfg's PanelTile). A row
// of the box is kSpan bytes, i.e. kSpan / element bytes columns of the map.
template <class Tile, int kElementBytes>
__device__ __forceinline__ void load_panels(unsigned char* dst, const fa::TmaDescriptor& map, int row,
                                            int head, int batch, fa::Barrier* full) {
#pragma unroll
  for (int panel = 0; panel < Tile::kPanels; ++panel)
    fa::tma_load(dst + panel * Tile::kPanelBytes, map, panel * (Tile::kSpan / kElementBytes), row, head,
                 batch, full);
}

// Warpgroup 0, one thread: Q per tile, then K_{last}, and per block K_{j+1} before V_j (the order in
// which the overlapped consumers need them). `count` runs over the CTA's key blocks across tiles.
template <class Cfg, bool Is_causal>
__device__ __forceinline__ void produce(const fa::AttentionParams& p, const fa::TmaDescriptors& maps,
                                        unsigned char* smem, typename Cfg::Barriers& bars) {
  const fa::TileScheduler sched(p.seqlen_q, Cfg::kBlockM, p.heads_q, p.batch);
  int count = 0, tile_number = 0;
  auto load_k = [&](int c, int block, const TileWork<Cfg, Is_causal>& w) {
    fa::Barrier* full = bars.k.acquire(c, Cfg::kKVBytes, "k_empty");
    unsigned char* slot = smem + Cfg::kKOffset + fa::LoadRing<Cfg::kStages>::slot(c) * Cfg::kKVBytes;
    load_panels<typename Cfg::KTile, Cfg::kElementBytes>(slot, maps.k, block * Cfg::kBlockN, w.kv_head,
                                                         w.tile.batch, full);
  };
  auto load_v = [&](int c, int block, const TileWork<Cfg, Is_causal>& w) {
    if constexpr (Cfg::kTransposeVInKernel) {
      // kTransposeV: row-major V into the staging ring; warps 1..3 write the V^T slot and announce it
      // (fa3_sm90_v_transpose_smem.cuh). The slot's flag says a tile is there.
      auto& staged = Cfg::staged_v_barriers(smem);
      staged.ring.wait_empty(c, "v_staged_empty");
      staged.more[fa::LoadRing<Cfg::kStages>::slot(c)] = 1;  // released by the full arrival
      fa::Barrier* full = staged.ring.announce(c, Cfg::kStagedVBytes);
      load_panels<typename Cfg::StagedVTile, 1>(
          smem + Cfg::kStagedVOffset + fa::LoadRing<Cfg::kStages>::slot(c) * Cfg::kStagedVBytes, maps.v,
          block * Cfg::kBlockN, w.kv_head, w.tile.batch, full);
      return;
    }
    fa::Barrier* full = bars.v.acquire(c, Cfg::kVBytes, "v_empty");
    unsigned char* slot = smem + Cfg::kVOffset + fa::LoadRing<Cfg::kStages>::slot(c) * Cfg::kVBytes;
    using Tile = typename Cfg::VTile;
    if constexpr (Cfg::kVTransposed) {
      // V^T (B, H_kv, D, keys): the box is D rows x kSpan keys; panel i holds keys i kSpan.. of the block.
#pragma unroll
      for (int panel = 0; panel < Tile::kPanels; ++panel)
        fa::tma_load(slot + panel * Tile::kPanelBytes, maps.v, block * Cfg::kBlockN + panel * Tile::kSpan, 0,
                     w.kv_head, w.tile.batch, full);
    } else {  // 16-bit V (bf16 with kPvBf16): rows of D
      load_panels<Tile, 2>(slot, maps.v, block * Cfg::kBlockN, w.kv_head, w.tile.batch, full);
    }
  };
  const fa::TileCounter counter{p.tile_counter};
  int index = blockIdx.x;
  for (; index < sched.total; ++tile_number) {
    const TileWork<Cfg, Is_causal> w(p, sched, index);
    if (w.n_blocks > 0) load_k(count, w.n_blocks - 1, w);
    // Q replaces the previous tile's Q, where that tile's O was staged: wait for its stores to have read it.
    bars.q.wait_empty(tile_number, "q_empty");
    if constexpr (Cfg::kDynamicTiles) bars.tile_slot[0] = index;  // released by q.full's arrival
    fa::Barrier* q_full = bars.q.announce(tile_number, Cfg::kQBytes);
    load_panels<typename Cfg::QTile, Cfg::kElementBytes>(smem, maps.q, w.m0, w.tile.head, w.tile.batch,
                                                         q_full);
    for (int j = 0; j < w.n_blocks; ++j, ++count) {
      if (j + 1 < w.n_blocks) load_k(count + 1, w.n_blocks - 2 - j, w);
      load_v(count, w.n_blocks - 1 - j, w);
    }
    index = Cfg::kDynamicTiles ? counter.next() : index + int(gridDim.x);
  }
  if constexpr (Cfg::kDynamicTiles) {
    // No more tiles: a q.full phase without bytes tells the consumers so.
    bars.q.wait_empty(tile_number, "q_empty");
    bars.tile_slot[0] = index;
    bars.q.announce(tile_number, 0);
    counter.retire();
  }
  if constexpr (Cfg::kTransposeVInKernel) {
    // No more key blocks: a staged phase without bytes, its flag 0, ends the transposing warps.
    auto& staged = Cfg::staged_v_barriers(smem);
    staged.ring.wait_empty(count, "v_staged_empty");
    staged.more[fa::LoadRing<Cfg::kStages>::slot(count)] = 0;
    staged.ring.announce(count, 0);
  }
}

}  // namespace fa3
