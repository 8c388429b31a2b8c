// fa2_sm80 backward: FlashAttention-2's gradients on mma.sync.
//
//   step 0  fa_bwd_preprocess (fa_backward.cuh): D = rowsum(dO * O) per query row (fp32); in atomic dQ
//           mode it also zeroes the fp32 dQ accumulator.
//   step 1  fa2_sm80_bwd_dkdv: one CTA per (key block, key/value head, batch); loops over the query heads
//           of its GQA group and their query blocks; recomputes S^T = K Q^T and P^T from the stored LSE,
//           dV += P^T dO, dP^T = V dO^T, dS^T = P^T (dP^T - D), dK += dS^T Q. Each warp owns 16 * kMT key
//           rows, so S^T, P^T and dS^T stay in registers and feed the next mma as A fragments.
//           kDqAtomic = 1: dS^T also goes to shared memory and the CTA computes dQ_i += dS K_j for the
//           query block, added to an fp32 accumulator in device memory with red.global.add (FA2's way).
//   step 2  kDqAtomic = 0, fa2_sm80_bwd_dq: one CTA per (query block, head, batch); loops over key blocks;
//           recomputes S, P, dP = dO V^T, dS and accumulates dQ += dS K in registers. Deterministic (the
//           same bits on every run) but 7 products per (query, key) block pair instead of 5.
//           kDqAtomic = 1, fa_bwd_dq_convert: dQ = scale * accumulator in the output dtype.
//
// The dQ mode is a tunable; the default is the deterministic pass (device/families/fa2_sm80_bwd.cpp). The
// pass repeats 2 of 7 products (H200 2026-11-29, bf16 d64 n 2048/4096: 174/181 TFLOP/s, 0.70-0.74 of
// PyTorch FA2, about 5/7); REDs cost 4 B of L2 traffic per kFLOP of mma instead.
//
// Q/dO pipeline (kStages): 1 = load the tiles of query block i, wait, compute, barrier (the copies of
// block i+1 cannot start before every warp is done with block i); 2 = double buffers: the copies of
// block i+1 are issued right after the barrier that opens block i, so they overlap its 4-5 products.
// FA2 double-buffers Q the same way at d64 and d128.
#include "fa2_sm80_bwd_config.cuh"
#include "fa2_sm80_bwd_dq.cuh"
#include "fa_arch.h"
#include "fa_block_range.cuh"
#include "fa_bwd_blocks.cuh"
#include "fa_copy.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_tile_coords.cuh"
#include "fa_warp_mma.cuh"

// Step 1: grid (ceil(N_k / kBlockN), H_kv, B), block 32 * kNWarps, BwdConfig::kSmemBytes dynamic.
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, int kStages, int kDqAtomic,
          bool Is_causal>
__global__ void __launch_bounds__(fa::kWarpSize* kNWarps)
    fa2_sm80_bwd_dkdv(const __grid_constant__ fa::AttentionParams p) {
  using Cfg = fa2bwd::BwdConfig<kHeadDim, kBlockM, kBlockN, kNWarps, kStages, kDqAtomic>;
  static_assert(kBlockN % (16 * kNWarps) == 0 && kBlockN / kNWarps / 16 <= 2,
                "dK/dV: 1-2 key tiles per warp");
  constexpr int kMT = kBlockN / kNWarps / 16, kNT = kBlockM / 8, kDT = Cfg::kDT, kRowBytes = Cfg::kRowBytes;
  constexpr int kQBytes = kBlockM * kRowBytes;
  using Dq = fa::DqSplit<kBlockM, kHeadDim, kNWarps>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int n_block = blockIdx.x, kv_head = blockIdx.y, batch = blockIdx.z;
  const int n0 = n_block * kBlockN, group = p.heads_q / p.heads_kv;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const float scale_log2 = fa::scale_log2_of(p);

  const unsigned s_k = fa::smem_addr(smem), s_v = s_k + kBlockN * kRowBytes;
  const unsigned s_q0 = s_v + kBlockN * kRowBytes, s_do0 = s_q0 + kStages * kQBytes;  // + stage * kQBytes
  const unsigned s_ds = s_do0 + kStages * kQBytes;                                    // atomic dQ only
  float* s_lse0 = reinterpret_cast<float*>(smem + Cfg::kTileBytes + Cfg::kDsBytes);   // log2 units
  float* s_delta0 = s_lse0 + kStages * kBlockM;                                       // + stage * kBlockM

  const Element* k = fa::k_slice<Element>(p, batch, kv_head);
  const Element* v = fa::v_slice<Element>(p, batch, kv_head);
  fa::load_tile_async<kBlockN, kHeadDim, Cfg::kThreads>(s_k, k + n0 * p.k_row_stride, p.k_row_stride,
                                                        p.seqlen_k - n0, tid);
  fa::load_tile_async<kBlockN, kHeadDim, Cfg::kThreads>(s_v, v + n0 * p.v_row_stride, p.v_row_stride,
                                                        p.seqlen_k - n0, tid);
  fa::cp_async_commit();

  const fa::LaneOffsets lo(lane);
  float dk[kMT][kDT][4], dv[kMT][kDT][4];
  fa::clear_accumulators(dk);
  fa::clear_accumulators(dv);

  // Query rows that can see this key block: i + offset >= n0 under the causal mask. The (head, query
  // block) pairs of the GQA group are walked as one sequence t = 0 .. steps-1 so that the pipeline runs
  // across head boundaries too.
  const int m_begin = fa::first_query_block<Is_causal, kBlockM>(n0, causal_offset);
  const int m_blocks = (p.seqlen_q + kBlockM - 1) / kBlockM;
  const int per_head = max(0, m_blocks - m_begin), steps = group * per_head;
  const int key_row0 = n0 + warp * 16 * kMT + lane / 4;  // this thread's first key row (rows g, g+8)

  // Copies of step t into buffer `stage`: Q and dO tiles by cp.async, LSE and D of row tid by plain loads
  // into registers (stored to shared memory by put_stats, after the loads had the products to land).
  float next_lse = 0.f, next_delta = 0.f;
  const auto issue = [&](int t, int stage) {
    const int h = kv_head * group + t / per_head, m0 = (m_begin + t % per_head) * kBlockM;
    const Element* q = fa::q_slice<Element>(p, batch, h);
    const Element* d_o = fa::d_o_slice<Element>(p, batch, h);
    fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_q0 + stage * kQBytes, q + m0 * p.q_row_stride,
                                                          p.q_row_stride, p.seqlen_q - m0, tid);
    fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_do0 + stage * kQBytes, d_o + m0 * p.o_row_stride,
                                                          p.o_row_stride, p.seqlen_q - m0, tid);
    fa::cp_async_commit();
    const long long stats = fa::row_index0(p, batch, h) + m0 + tid;
    const bool valid = tid < kBlockM && m0 + tid < p.seqlen_q;
    next_lse = fa::lse_log2_for_backward(valid ? p.lse[stats] : 0.f, valid);
    next_delta = valid ? p.delta[stats] : 0.f;
  };
  const auto put_stats = [&](int stage) {
    if (tid < kBlockM) {
      s_lse0[stage * kBlockM + tid] = next_lse;
      s_delta0[stage * kBlockM + tid] = next_delta;
    }
  };

  if (kStages == 2 && steps > 0) {
    issue(0, 0);
    put_stats(0);
  }
  for (int t = 0; t < steps; ++t) {
    const int stage = kStages == 2 ? t % 2 : 0;
    const int h = kv_head * group + t / per_head, m0 = (m_begin + t % per_head) * kBlockM;
    const unsigned s_q = s_q0 + stage * kQBytes, s_do = s_do0 + stage * kQBytes;
    const float* s_lse = s_lse0 + stage * kBlockM;
    const float* s_delta = s_delta0 + stage * kBlockM;
    const bool has_next = t + 1 < steps;
    if constexpr (kStages == 1) {
      issue(t, 0);
      put_stats(0);
      fa::cp_async_wait<0>();
      __syncthreads();
    } else {
      fa::cp_async_wait<0>();
      // One barrier opens step t: its tiles are visible, and every warp has finished step t-1, whose
      // buffers (the other stage, and the dS^T tile) the copies of step t+1 may now overwrite.
#ifdef FA_MUTANT_BWD_RACE
      if (has_next) issue(t + 1, stage ^ 1);  // [bwd-race] next tiles issued before the barrier: slow
      __syncthreads();                        // warps may still be reading that buffer for step t-1
#else
      __syncthreads();
      if (has_next) issue(t + 1, stage ^ 1);
#endif
    }

    fa::dkdv_block<Element, kHeadDim, kBlockM, kMT, Is_causal, kDqAtomic == 1>(
        dk, dv, {s_k, s_v, s_q, s_do, s_ds, s_lse, s_delta}, p, m0, warp * 16 * kMT, key_row0, causal_offset,
        scale_log2, lo, lane);

    if constexpr (kDqAtomic) {
      __syncthreads();  // every warp's dS^T rows are in s_ds
      // dQ_i += dS K_j for this query block: C tiles of DqSplit, then one RED per value pair.
      const int warp_m = warp % Dq::kWarpsM, warp_d = warp / Dq::kWarpsM;
      const int q_first = warp_m * Dq::kMT * 16;
      float dq[Dq::kMT][Dq::kDT][4];
      fa::dq_block<Element, kBlockM, kBlockN, kHeadDim, kNWarps>(dq, s_ds, s_k, warp, lo, lane);
      float* acc = p.dq_accum + ((static_cast<long long>(batch) * p.heads_q + h) * p.seqlen_q) * kHeadDim;
#pragma unroll
      for (int mt = 0; mt < Dq::kMT; ++mt)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int row = m0 + q_first + 16 * mt + 8 * hh + lane / 4;
          if (row >= p.seqlen_q) continue;
#pragma unroll
          for (int dt = 0; dt < Dq::kDT; ++dt) {
            float* dst =
                acc + static_cast<long long>(row) * kHeadDim + (warp_d * Dq::kDT + dt) * 8 + 2 * (lane % 4);
#ifdef FA_MUTANT_BWD_DQ_OVERWRITE
            // [bwd-dq-overwrite] each key block's dQ share stored over the accumulator instead of added
            *reinterpret_cast<float2*>(dst) = make_float2(dq[mt][dt][2 * hh], dq[mt][dt][2 * hh + 1]);
#else
            fa::red_add_f32x2(dst, dq[mt][dt][2 * hh], dq[mt][dt][2 * hh + 1]);
#endif
          }
        }
    }
    if constexpr (kStages == 1) {
#ifndef FA_MUTANT_BWD_RACE  // [bwd-race] no barrier before the next Q/dO (and dS^T) tiles overwrite these
      __syncthreads();
#endif
    } else {
      if (has_next) put_stats(stage ^ 1);  // read last in step t-1, which every warp finished
    }
  }

  fa::cp_async_wait<0>();  // K/V copies of a block no query sees must land before the CTA exits

  fa::store_dk_dv<Element>(dk, dv, fa::dk_scale_of(scale_log2), p, batch, kv_head, key_row0, lane);
}
