#pragma once
// fa3_sm90 forward, a consumer warpgroup: 64 query rows of each tile, S = Q K^T and O += P V on wgmma,
// the online softmax of fa_softmax.cuh between them, then the epilogue (fa3_sm90_epilogue.cuh).
//
// Register map: S and O are wgmma m64 accumulators, float[N/8][4] per thread, which is exactly one 16-row
// mma.sync tile (kMT = 1) of the warp's rows 16 warp + lane/4 (+8): fa::OnlineSoftmax<1>, fa::apply_mask
// and fa::normalise_and_write_lse take them as they are. P is repacked from S in registers as the A
// operand of P V (mma.sync's A fragment: the same packing as fa2_sm80).
#include "fa3_sm90_epilogue.cuh"
#include "fa3_sm90_layout.cuh"
#include "fa_epilogue.cuh"
#include "fa_mask.cuh"
#include "fa_softmax.cuh"
#include "fa_wgmma.cuh"

namespace fa3 {

template <typename Element, class Cfg, bool Is_causal>
struct Consumer {
  static constexpr int kNT = Cfg::kNT, kDT = Cfg::kDT, kPSteps = Cfg::kPSteps;
  static constexpr int kConsumers = Cfg::kConsumers;
  static constexpr bool kPingPong = Cfg::kPingPong;

  const fa::AttentionParams& p;
  unsigned char* smem;
  typename Cfg::Barriers& bars;
  const int wg;  // consumer index 0..kConsumers-1
  const int tid = threadIdx.x % kWarpgroupThreads, warp = tid / 32, lane = tid % 32;
  const bool signalling = tid == 0;  // the thread that releases slots for the warpgroup
  unsigned char* const q_rows = smem + wg * kRowsPerConsumer * kPanelBytes;  // this WG's rows of panel 0
  const float scale_log2 = fa::scale_log2_of(p);

  float s[1][kNT][4];
  float o[1][kDT][4];
  unsigned pa[kPSteps][4];  // P as the A operand, 16 keys per step
  float rescale[2];
  fa::OnlineSoftmax<1> softmax;

  // Ping-pong: wait for this warpgroup's turn to issue products, and pass the turn on after issuing.
  __device__ __forceinline__ void take_turn() {
    if constexpr (kPingPong) fa::named_barrier_sync(kTurnBarrier + wg, 2 * kWarpgroupThreads);
  }
  __device__ __forceinline__ void pass_turn() {
    if constexpr (kPingPong)
      fa::named_barrier_arrive(kTurnBarrier + (wg + 1) % kConsumers, 2 * kWarpgroupThreads);
  }

  // S = Q K^T for the K tile in slot `slot`, committed as one group.
  __device__ __forceinline__ void issue_qk(int slot) {
    const unsigned k_tile = fa::smem_addr(smem) + Cfg::kKOffset + slot * Cfg::kKVBytes;
    fa::wgmma_fence();
    const unsigned q_tile = fa::smem_addr(q_rows);
    using Ops = fa::WgmmaOps<Element, Cfg::kBlockN>;
    Ops::template ss<0>(s[0], fa::k_major_descriptor(q_tile, Cfg::kQPanelBytes, 0),
                        fa::k_major_descriptor(k_tile, Cfg::kKVPanelBytes, 0));
#pragma unroll
    for (int step = 1; step < Cfg::kQKSteps; ++step)
      Ops::template ss<1>(s[0], fa::k_major_descriptor(q_tile, Cfg::kQPanelBytes, step),
                          fa::k_major_descriptor(k_tile, Cfg::kKVPanelBytes, step));
    fa::wgmma_commit();
  }
  // O += P V for the V tile in slot `slot`, committed as one group.
  __device__ __forceinline__ void issue_pv(int slot) {
    const unsigned v_tile = fa::smem_addr(smem) + Cfg::kVOffset + slot * Cfg::kKVBytes;
    fa::wgmma_fence();
#pragma unroll
    for (int step = 0; step < kPSteps; ++step)
      fa::WgmmaOps<Element, Cfg::kHeadDim>::template rs<1>(
          o[0], pa[step], fa::n_major_descriptor(v_tile, Cfg::kKVPanelBytes, step), 1);
    fa::wgmma_commit();
  }
  // Waits for all but kPending product groups; the operands they owned are ordinary registers again.
  template <int kPending>
  __device__ __forceinline__ void wait_products() {
    fa::wgmma_wait<kPending>();
    fa::fence_operands(s[0]);
    if constexpr (kPending == 0) {
      fa::fence_operands(o[0]);
#pragma unroll
      for (int step = 0; step < kPSteps; ++step)
#pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(pa[step][e])::"memory");
    }
  }

  // One product alone, start to finish: wait for its tile, take the turn, issue, pass the turn, wait for
  // it, release the slot.
  __device__ __forceinline__ void qk_alone(int count) {
    bars.k.wait_full(count, "k_full");
    take_turn();
    issue_qk(bars.k.slot(count));
    pass_turn();
    wait_products<0>();
    bars.k.release(count, signalling);
  }
  __device__ __forceinline__ void pv_alone(int count) {
    bars.v.wait_full(count, "v_full");
    take_turn();
    issue_pv(bars.v.slot(count));
    pass_turn();
    wait_products<0>();
    bars.v.release(count, signalling);
    if constexpr (fa::kNormalizeInLoop) fa::divide_by_row_sums(o, softmax.row_sum);
  }

  // Masks (where the block can hold a masked key) and exponentiates S; rescale gets the factor for O.
  __device__ __forceinline__ void softmax_of_block(int block, int row0, int unmasked_limit) {
    if (fa::key_block_needs_mask(block, Cfg::kBlockN, unmasked_limit))
      fa::apply_mask<Is_causal>(s, row0, block * Cfg::kBlockN + 2 * (lane % 4), p.seqlen_k,
                                p.seqlen_k - p.seqlen_q);
    softmax.update(s, scale_log2, rescale);
  }
  __device__ __forceinline__ void pack_p() {
#pragma unroll
    for (int kk = 0; kk < kPSteps; ++kk) {
      pa[kk][0] = fa::ElementTraits<Element>::pack(s[0][2 * kk][0], s[0][2 * kk][1]);
      pa[kk][1] = fa::ElementTraits<Element>::pack(s[0][2 * kk][2], s[0][2 * kk][3]);
      pa[kk][2] = fa::ElementTraits<Element>::pack(s[0][2 * kk + 1][0], s[0][2 * kk + 1][1]);
      pa[kk][3] = fa::ElementTraits<Element>::pack(s[0][2 * kk + 1][2], s[0][2 * kk + 1][3]);
    }
  }

  // The key blocks of one tile; `count` is the CTA's running key-block number (the load ring's).
  __device__ __forceinline__ void mainloop(const TileWork<Cfg, Is_causal>& w, int& count) {
    const int row0 = w.m0 + wg * kRowsPerConsumer + 16 * warp + lane / 4;
    const int unmasked =
        fa::unmasked_key_limit<Is_causal>(w.m0 + wg * kRowsPerConsumer, p.seqlen_q, p.seqlen_k);
    if constexpr (Cfg::kIntraWgOverlap) {
      // Block 0 (the last key block) alone, then per block j: S_j and P_{j-1} V_{j-1} in flight together.
      qk_alone(count);
      softmax_of_block(w.n_blocks - 1, row0, unmasked);
      pack_p();
      for (int j = 1; j < w.n_blocks; ++j, ++count) {
        // Both waits before the first issue: no barrier wait (a loop with a timer) sits inside the products.
        bars.k.wait_full(count + 1, "k_full");
        bars.v.wait_full(count, "v_full");
        take_turn();
        issue_qk(bars.k.slot(count + 1));
        fa::OnlineSoftmax<1>::rescale_o(o, rescale);  // P_{j-1} V_{j-1} is added at the max of block j-1
        issue_pv(bars.v.slot(count));
        pass_turn();
        float sums_before[2] = {softmax.row_sum[0], softmax.row_sum[1]};
        wait_products<1>();  // S_j
        bars.k.release(count + 1, signalling);
        softmax_of_block(w.n_blocks - 1 - j, row0, unmasked);
        wait_products<0>();  // P_{j-1} V_{j-1}
        bars.v.release(count, signalling);
        if constexpr (fa::kNormalizeInLoop) fa::divide_by_row_sums(o, sums_before);
        pack_p();
      }
      fa::OnlineSoftmax<1>::rescale_o(o, rescale);
      pv_alone(count);
      ++count;
    } else {
      for (int j = 0; j < w.n_blocks; ++j, ++count) {
        qk_alone(count);
        softmax_of_block(w.n_blocks - 1 - j, row0, unmasked);
        fa::OnlineSoftmax<1>::rescale_o(o, rescale);
        pack_p();
        pv_alone(count);
      }
    }
  }
};

template <typename Element, class Cfg, bool Is_causal>
__device__ __forceinline__ void consume(const fa::AttentionParams& p, const fa::TmaDescriptors& maps,
                                        unsigned char* smem, typename Cfg::Barriers& bars, int wg) {
  Consumer<Element, Cfg, Is_causal> c{p, smem, bars, wg};
  constexpr int kConsumers = Cfg::kConsumers;
  // Ping-pong: the last warpgroup hands the first turn to warpgroup 0.
  if (c.kPingPong && wg == kConsumers - 1) fa::named_barrier_arrive(kTurnBarrier, 2 * kWarpgroupThreads);
  const fa::TileScheduler sched(p.seqlen_q, Cfg::kBlockM, p.heads_q, p.batch);
  int count = 0, tile_number = 0;
  for (int index = blockIdx.x; index < sched.total; index += gridDim.x, ++tile_number) {
    const TileWork<Cfg, Is_causal> w(p, sched, index);
#pragma unroll
    for (int dt = 0; dt < Cfg::kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) c.o[0][dt][e] = 0.f;
    c.softmax.init();
    // Always wait for Q, also for a tile without key blocks: its O is staged where Q lands.
    bars.q.wait_full(tile_number, "q_full");
    if (w.n_blocks > 0) c.mainloop(w, count);
    store_tile<Element, Cfg>(p, maps, w, c.o, c.softmax, c.scale_log2, c.q_rows, wg, c.warp, c.lane);
    bars.q.release(tile_number, c.signalling);
  }
  // The turn passed on after the last products stays pending at warpgroup 0 when the CTA ends (as in
  // FlashAttention-3). Taking it here (a bar.sync under `wg == 0` after the loop) made ptxas allocate the
  // consumers at the entry's 168 registers instead of setmaxnreg's 240: 248 bytes of spills and serialised
  // wgmma at d128 128x128 (CUDA 13.0).
}

}  // namespace fa3
