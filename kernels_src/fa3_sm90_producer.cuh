#pragma once
// fa3_sm90 forward, the producer warpgroup: one thread issues every TMA copy of the CTA.
#include "fa3_sm90_layout.cuh"
#include "fa_tma.cuh"
#include "fa_tma_params.h"

namespace fa3 {

// Warpgroup 0, one thread: Q per tile, then K_{last}, and per block K_{j+1} before V_j (the order in
// which the overlapped consumers need them). `count` runs over the CTA's key blocks across tiles.
template <class Cfg, bool Is_causal>
__device__ __forceinline__ void produce(const fa::AttentionParams& p, const fa::TmaDescriptors& maps,
                                        unsigned char* smem, typename Cfg::Barriers& bars) {
  const fa::TileScheduler sched(p.seqlen_q, Cfg::kBlockM, p.heads_q, p.batch);
  int count = 0, tile_number = 0;
  auto load_kv = [&](const fa::TmaDescriptor& map, fa::LoadRing<Cfg::kStages>& ring, int offset, int c,
                     int block, const TileWork<Cfg, Is_causal>& w, const char* name) {
    fa::Barrier* full = ring.acquire(c, Cfg::kKVBytes, name);
    unsigned char* slot = smem + offset + fa::LoadRing<Cfg::kStages>::slot(c) * Cfg::kKVBytes;
#pragma unroll
    for (int panel = 0; panel < Cfg::kPanels; ++panel)
      fa::tma_load(slot + panel * Cfg::kKVPanelBytes, map, panel * kColumnsPerPanel, block * Cfg::kBlockN,
                   w.kv_head, w.tile.batch, full);
  };
  for (int index = blockIdx.x; index < sched.total; index += gridDim.x, ++tile_number) {
    const TileWork<Cfg, Is_causal> w(p, sched, index);
    if (w.n_blocks > 0) load_kv(maps.k, bars.k, Cfg::kKOffset, count, w.n_blocks - 1, w, "k_empty");
    // Q replaces the previous tile's Q, where that tile's O was staged: wait for its stores to have read it.
    fa::Barrier* q_full = bars.q.acquire(tile_number, Cfg::kQBytes, "q_empty");
#pragma unroll
    for (int panel = 0; panel < Cfg::kPanels; ++panel)
      fa::tma_load(smem + panel * Cfg::kQPanelBytes, maps.q, panel * kColumnsPerPanel, w.m0, w.tile.head,
                   w.tile.batch, q_full);
    for (int j = 0; j < w.n_blocks; ++j, ++count) {
      if (j + 1 < w.n_blocks)
        load_kv(maps.k, bars.k, Cfg::kKOffset, count + 1, w.n_blocks - 2 - j, w, "k_empty");
      load_kv(maps.v, bars.v, Cfg::kVOffset, count, w.n_blocks - 1 - j, w, "v_empty");
    }
  }
}

}  // namespace fa3
