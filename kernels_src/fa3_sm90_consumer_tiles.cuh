#pragma once
// fa3_sm90 forward, a consumer warpgroup's loop over the CTA's tiles: per tile, O zeroed and the softmax
// state reset, Q waited for, the key blocks (Consumer::mainloop, fa3_sm90_consumer.cuh), Q released and
// O stored (fa3_sm90_epilogue.cuh), then the next tile: every gridDim.x-th (one CTA per tile, static
// persistent order) or the one the producer read from the counter (kDynamicTiles).
#include "fa3_sm90_consumer.cuh"
#include "fa3_sm90_epilogue.cuh"
#include "fa3_sm90_layout.cuh"
#include "fa_fp8.cuh"
#include "fa_tma.cuh"

namespace fa3 {

template <typename Element, class Cfg, bool Is_causal, bool kBlockDescale>
__device__ __forceinline__ void consume(const fa::AttentionParams& p, const fa::TmaDescriptors& maps,
                                        unsigned char* smem, typename Cfg::Barriers& bars, int wg) {
  Consumer<Element, Cfg, Is_causal, kBlockDescale> c{p, smem, bars, wg};
  if constexpr (Cfg::kFp8) {
    c.p_scale = fa::p_scale_of<Element>(p);
    c.scaled_p = fa::ScaledP{log2f(c.p_scale), 1.f / c.p_scale};
    c.v_descale_now = c.kFp8Pv ? p.v_descale : 1.f;  // bf16 V is not scaled
  }
  constexpr int kConsumers = Cfg::kConsumers;
  // Ping-pong: the last warpgroup hands the first turn to warpgroup 0.
  if (c.kPingPong && wg == kConsumers - 1) fa::named_barrier_arrive(kTurnBarrier, 2 * kWarpgroupThreads);
  const fa::TileScheduler sched(p.seqlen_q, Cfg::kBlockM, p.heads_q, p.batch);
  int count = 0, tile_number = 0;
  // Static orders: every gridDim.x-th tile. kDynamicTiles: the index the producer put beside the tile's
  // Q (the q.full wait acquires it), past the end when no tile is left. The wait sits at the end of the
  // loop body, not a `break` in its middle: with the early exit ptxas (CUDA 13.0) allocated the consumers
  // at the entry's 168 registers instead of setmaxnreg's 240 (248 bytes of spills at d128 128 x 128).
  auto wait_for_tile = [&](int number) {
    bars.q.wait_full(number, "q_full");
    return *static_cast<volatile int*>(&bars.tile_slot[0]);
  };
  // kDynamicTiles: every consumer thread arrives on Q's empty barrier (fa3_sm90_fwd.cu's init says why).
  const bool releases_q = Cfg::kDynamicTiles || c.signalling;
  int index = Cfg::kDynamicTiles ? wait_for_tile(0) : int(blockIdx.x);
  for (; index < sched.total; ++tile_number) {
#pragma unroll
    for (int dt = 0; dt < Cfg::kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) c.o[0][dt][e] = 0.f;
    c.softmax.init();
    // Always wait for Q, also for a tile without key blocks: its O is staged where Q lands.
    if constexpr (!Cfg::kDynamicTiles) bars.q.wait_full(tile_number, "q_full");
    const TileWork<Cfg, Is_causal> w(p, sched, index);
    if (w.n_blocks > 0) c.mainloop(w, count);
    // Every product has completed (the mainloop waits for the last one): Q may be replaced now.
    if constexpr (Cfg::kEarlyQRelease) bars.q.release(tile_number, releases_q);
    // O = acc v_descale / p_scale (FP8; normalize-in-loop already divided by l p_scale), then / l.
    const float o_factor = c.v_descale_now * (fa::kNormalizeInLoop ? 1.f : 1.f / c.p_scale);
    store_tile<Element, Cfg>(p, maps, w, c.o, c.softmax, c.scale_log2, o_factor, c.o_rows, wg, c.warp,
                             c.lane);
    if constexpr (!Cfg::kEarlyQRelease) bars.q.release(tile_number, releases_q);
    index = Cfg::kDynamicTiles ? wait_for_tile(tile_number + 1) : index + int(gridDim.x);
  }
  // The turn passed on after the last products stays pending at warpgroup 0 when the CTA ends (as in
  // FlashAttention-3). Taking it here (a bar.sync under `wg == 0` after the loop) made ptxas allocate the
  // consumers at the entry's 168 registers instead of setmaxnreg's 240: 248 bytes of spills and serialised
  // wgmma at d128 128x128 (CUDA 13.0).
}

}  // namespace fa3
