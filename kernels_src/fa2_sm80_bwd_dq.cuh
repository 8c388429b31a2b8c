#pragma once
// fa2_sm80_bwd's dQ pass (kDqAtomic = 0, the deterministic mode): one CTA per (query block, head, batch)
// loops over the key blocks its rows see (fa_block_range.cuh), recomputes S, P, dP = dO V^T, dS and
// accumulates dQ += dS K in registers. The kernel file fa2_sm80_bwd.cu describes the whole backward.
#include "fa2_sm80_bwd_config.cuh"
#include "fa_arch.h"
#include "fa_backward.cuh"
#include "fa_block_range.cuh"
#include "fa_copy.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_tile_coords.cuh"
#include "fa_warp_mma.cuh"

// Step 2 (kDqAtomic = 0): grid (ceil(N_q / kBlockM), H_q, B), block 32 * kNWarps. Deterministic: each dQ
// element is summed by one thread in a fixed order.
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, bool Is_causal>
__global__ void __launch_bounds__(fa::kWarpSize* kNWarps)
    fa2_sm80_bwd_dq(const __grid_constant__ fa::AttentionParams p) {
  using Cfg = fa2bwd::BwdConfig<kHeadDim, kBlockM, kBlockN, kNWarps, 1, 0>;
  static_assert(kBlockM % (16 * kNWarps) == 0 && kBlockM / kNWarps / 16 <= 2, "dQ: 1-2 query tiles per warp");
  constexpr int kMT = kBlockM / kNWarps / 16, kNT = kBlockN / 8, kDT = Cfg::kDT, kRowBytes = Cfg::kRowBytes;
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const fa::QueryTile tile = fa::query_tile<kBlockM>(p);
  const int m0 = tile.m0, head = tile.head, batch = tile.batch, kv_head = tile.kv_head;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const float scale_log2 = fa::scale_log2_of(p);

  const unsigned s_q = fa::smem_addr(smem), s_do = s_q + kBlockM * kRowBytes;
  const unsigned s_k = s_do + kBlockM * kRowBytes, s_v = s_k + kBlockN * kRowBytes;
  const Element* q = fa::q_slice<Element>(p, batch, head);
  const Element* d_o = fa::d_o_slice<Element>(p, batch, head);
  const Element* k = fa::k_slice<Element>(p, batch, kv_head);
  const Element* v = fa::v_slice<Element>(p, batch, kv_head);
  fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_q, q + m0 * p.q_row_stride, p.q_row_stride,
                                                        p.seqlen_q - m0, tid);
  fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_do, d_o + m0 * p.o_row_stride, p.o_row_stride,
                                                        p.seqlen_q - m0, tid);
  fa::cp_async_commit();

  const fa::LaneOffsets lo(lane);
  const long long stats = fa::row_index0(p, batch, head);
  const int row0 = m0 + warp * 16 * kMT + lane / 4;
  float lse_log2[2 * kMT], delta[2 * kMT];
#pragma unroll
  for (int r = 0; r < 2 * kMT; ++r) {
    const int row = row0 + 16 * (r / 2) + 8 * (r % 2);
    const bool valid = row < p.seqlen_q;
    lse_log2[r] = fa::lse_log2_for_backward(valid ? p.lse[stats + row] : 0.f, valid);
    delta[r] = valid ? p.delta[stats + row] : 0.f;
  }
  float dq[kMT][kDT][4];
  fa::clear_accumulators(dq);

  const int n_blocks = fa::key_block_count<Is_causal, kBlockM, kBlockN>(m0, {p.seqlen_k, causal_offset});
  const unsigned warp_rows = (warp * 16 * kMT + lo.row_a) * kRowBytes;
  for (int nb = 0; nb < n_blocks; ++nb) {
    const int n0 = nb * kBlockN;
    fa::load_tile_async<kBlockN, kHeadDim, Cfg::kThreads>(s_k, k + n0 * p.k_row_stride, p.k_row_stride,
                                                          p.seqlen_k - n0, tid);
    fa::load_tile_async<kBlockN, kHeadDim, Cfg::kThreads>(s_v, v + n0 * p.v_row_stride, p.v_row_stride,
                                                          p.seqlen_k - n0, tid);
    fa::cp_async_commit();
    fa::cp_async_wait<0>();
    __syncthreads();
    float s[kMT][kNT][4], dp[kMT][kNT][4];
    fa::clear_accumulators(s);
    fa::clear_accumulators(dp);
    fa::warp_qk<Element, kMT, kNT, kHeadDim>(s, s_q + warp_rows, s_k + lo.row_b * kRowBytes, lo);
    fa::apply_mask<Is_causal>(s, row0, n0 + 2 * (lane % 4), p.seqlen_k, causal_offset);
    fa::warp_qk<Element, kMT, kNT, kHeadDim>(dp, s_do + warp_rows, s_v + lo.row_b * kRowBytes, lo);
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = 2 * mt + e / 2;
          const float prob = fa::prob_of(s[mt][nt][e], scale_log2, lse_log2[r]);
          s[mt][nt][e] = fa::ds_of(prob, dp[mt][nt][e], delta[r]);
        }
#ifdef FA_MUTANT_BWD_DQ_OVERWRITE
    // [bwd-dq-overwrite] dQ overwritten by each key block instead of accumulated
    fa::clear_accumulators(dq);
#endif
    fa::warp_pv<Element, kMT, kNT, kDT>(dq, s, s_k + lo.row_a * kRowBytes, lo);  // dQ += dS K
    __syncthreads();  // every warp done with K_j, V_j before the next block overwrites them
  }
  fa::cp_async_wait<0>();

  const float scale = scale_log2 * fa::kLn2;
  Element* dq_out = fa::d_q_slice<Element>(p, batch, head);

#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int row = row0 + 16 * mt + 8 * hh;
      if (row >= p.seqlen_q) continue;
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt)
        *reinterpret_cast<unsigned*>(dq_out + row * p.o_row_stride + 8 * dt + 2 * (lane % 4)) =
            fa::ElementTraits<Element>::pack(dq[mt][dt][2 * hh] * scale, dq[mt][dt][2 * hh + 1] * scale);
    }
}
