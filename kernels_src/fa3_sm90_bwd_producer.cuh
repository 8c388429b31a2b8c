#pragma once
// fa3_sm90_bwd, the producer warpgroup's two loaders, each walking the CTA's steps (BwdSteps) through the
// Q/dO ring: one thread of warp 0 issues every TMA copy (K and V once, then Q and dO per step); warp 1's
// 32 lanes write each step's LSE (log2 units, +inf for rows without a visible key or past n_q, so that
// their P is 0) and D rows into the slot with ordinary stores. A slot's full barrier completes on the TMA
// thread's expect-bytes arrival, the 32 lanes' arrivals (release: their stores are visible to the
// consumers that wait on it) and the bytes. Two roles rather than one warp doing both: the producer runs on
// 24 registers, and each loop alone fits them.
#include "fa3_sm90_bwd_layout.cuh"
#include "fa_backward.cuh"
#include "fa_tma.cuh"
#include "fa_tma_params.h"

namespace fa3 {

constexpr int kBwdStatsLanes = 32;                    // warp 1 of the producer warpgroup
constexpr int kBwdFullArrivals = 1 + kBwdStatsLanes;  // + the TMA thread's expect-bytes arrival

// The step's (head, m0), advanced by counters rather than t / per_head (fewer registers).
template <class Cfg, bool Is_causal>
struct StepCursor {
  int head, m0;
  __device__ __forceinline__ explicit StepCursor(const BwdSteps<Cfg, Is_causal>& w)
      : head(w.kv_head * w.group), m0(w.m_begin * Cfg::kBlockM) {}
  __device__ __forceinline__ void advance(const BwdSteps<Cfg, Is_causal>& w) {
    m0 += Cfg::kBlockM;
    if (m0 == (w.m_begin + w.per_head) * Cfg::kBlockM) {
      m0 = w.m_begin * Cfg::kBlockM;
      ++head;
    }
  }
};

template <class Cfg, bool Is_causal>
__device__ __forceinline__ void load_tiles_bwd(const fa::TmaBwdDescriptors& maps, unsigned char* smem,
                                               typename Cfg::Barriers& bars,
                                               const BwdSteps<Cfg, Is_causal>& w) {
  fa::barrier_arrive_expect_bytes(&bars.kv_full, 2 * Cfg::kKVBytes);
#pragma unroll
  for (int panel = 0; panel < Cfg::kPanels; ++panel) {
    fa::tma_load(smem + Cfg::kKOffset + panel * Cfg::kKVPanelBytes, maps.k, panel * kBwdPanelColumns, w.n0,
                 w.kv_head, w.batch, &bars.kv_full);
    fa::tma_load(smem + Cfg::kVOffset + panel * Cfg::kKVPanelBytes, maps.v, panel * kBwdPanelColumns, w.n0,
                 w.kv_head, w.batch, &bars.kv_full);
  }
  StepCursor<Cfg, Is_causal> at(w);
  for (int t = 0; t < w.count; ++t, at.advance(w)) {
    const int slot = fa::LoadRing<Cfg::kStages>::slot(t);
    fa::Barrier* full = bars.q.acquire(t, 2 * Cfg::kQBytes, "qdo_empty");
#pragma unroll
    for (int panel = 0; panel < Cfg::kPanels; ++panel) {
      fa::tma_load(smem + Cfg::kQOffset + slot * Cfg::kQBytes + panel * Cfg::kQPanelBytes, maps.q,
                   panel * kBwdPanelColumns, at.m0, at.head, w.batch, full);
      fa::tma_load(smem + Cfg::kDoOffset + slot * Cfg::kQBytes + panel * Cfg::kQPanelBytes, maps.d_o,
                   panel * kBwdPanelColumns, at.m0, at.head, w.batch, full);
    }
  }
  // Watch over the consumers' unbounded waits (fa_tma.cuh): wait, bounded, until they have released the
  // last kStages slots, so that a consumer stuck on a load that never completes ends in this trap rather
  // than a hang. Their last releases follow their last products: this costs nothing.
  for (int t = w.count; t < w.count + Cfg::kStages; ++t) bars.q.wait_empty(t, "qdo_drain");
}

template <class Cfg, bool Is_causal>
__device__ __forceinline__ void load_stats_bwd(const fa::AttentionParams& p, unsigned char* smem,
                                               typename Cfg::Barriers& bars,
                                               const BwdSteps<Cfg, Is_causal>& w, int lane) {
  StepCursor<Cfg, Is_causal> at(w);
  for (int t = 0; t < w.count; ++t, at.advance(w)) {
    const int slot = fa::LoadRing<Cfg::kStages>::slot(t);
    bars.q.wait_empty(t, "stats_empty");
    float* lse_log2 = reinterpret_cast<float*>(smem + Cfg::kStatsOffset + slot * Cfg::kStatsBytes);
    const long long stats = (static_cast<long long>(w.batch) * p.heads_q + at.head) * p.seqlen_q + at.m0;
#pragma unroll
    for (int r = lane; r < Cfg::kBlockM; r += kBwdStatsLanes) {
      const bool valid = at.m0 + r < p.seqlen_q;
      lse_log2[r] = fa::lse_log2_for_backward(valid ? p.lse[stats + r] : 0.f, valid);
      lse_log2[Cfg::kBlockM + r] = valid ? p.delta[stats + r] : 0.f;  // D follows the LSE rows
    }
    fa::barrier_arrive(&bars.q.full[slot]);
  }
}

}  // namespace fa3
