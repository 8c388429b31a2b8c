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
// Why atomics are the default (numbers, H200 2026-11-29, bf16 d64 n 2048/4096): the separate pass ran at
// 174/181 TFLOP/s against PyTorch FA2's 235/258, a ratio of 0.70-0.74 that is almost exactly 5/7, the
// share of products the dQ pass repeats; the atomic variant drops those 2 products for kBlockM x d fp32
// REDs per (query block, key block) pair: at d128 kBlockM 64 that is 8192 x 4 B = 32 KiB of L2 traffic
// against 4 x 64 x 128 x 128 x 2 = 8.4 MFLOP of mma, i.e. 4 B per 1 kFLOP, far below what the L2
// sustains at mma.sync speed. Which mode wins per shape is for the H200 to say (fa-tune has both).
//
// Q/dO pipeline (kStages): 1 = load the tiles of query block i, wait, compute, barrier (the copies of
// block i+1 cannot start before every warp is done with block i); 2 = double buffers: the copies of
// block i+1 are issued right after the barrier that opens block i, so they overlap its 4-5 products.
// FA2 double-buffers Q the same way at d64 and d128.
#include "fa_backward.cuh"
#include "fa_copy.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_warp_mma.cuh"

namespace fa2bwd {

// Shared memory of the dK/dV kernel: K, V (kBlockN rows each), kStages x (Q, dO) tiles of kBlockM rows,
// in atomic dQ mode the dS^T tile (kBlockN x kBlockM, 16-bit), and kStages x (LSE, D) rows (fp32).
template <int kHeadDim, int kBlockM, int kBlockN, int kNWarps, int kStages, int kDqAtomic>
struct BwdConfig {
  static constexpr int kThreads = 32 * kNWarps;
  static constexpr int kRowBytes = kHeadDim * 2;
  static constexpr int kDT = kHeadDim / 8;
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256, "head dim 64, 128 or 256");
  static_assert(kNWarps == 4 || kNWarps == 8, "4 or 8 warps");
  static_assert(kBlockM % 16 == 0 && kBlockN % 16 == 0, "whole 16-wide k-steps");
  static_assert(kStages == 1 || kStages == 2, "Q/dO single or double buffered");
  static_assert(kDqAtomic == 0 || kDqAtomic == 1, "dQ by a separate pass (0) or by fp32 atomics (1)");
  static_assert((kBlockM * kHeadDim / 8) % kThreads == 0 && (kBlockN * kHeadDim / 8) % kThreads == 0,
                "tile copies split evenly over the threads");
  static_assert(kBlockM <= kThreads, "one thread per query row stages LSE and D");
  static constexpr int kTileBytes = 2 * kBlockN * kRowBytes + 2 * kStages * kBlockM * kRowBytes;
  static constexpr int kDsBytes = kDqAtomic ? kBlockN * kBlockM * 2 : 0;
  static constexpr int kSmemBytes = kTileBytes + kDsBytes + 2 * kStages * kBlockM * 4;
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block");
};

}  // namespace fa2bwd

// Step 1: grid (ceil(N_k / kBlockN), H_kv, B), block 32 * kNWarps, BwdConfig::kSmemBytes dynamic.
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, int kStages, int kDqAtomic,
          bool Is_causal>
__global__ void __launch_bounds__(32 * kNWarps)
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

  const Element* k = static_cast<const Element*>(p.k) + batch * p.k_batch_stride + kv_head * p.k_head_stride;
  const Element* v = static_cast<const Element*>(p.v) + batch * p.v_batch_stride + kv_head * p.v_head_stride;
  fa::load_tile_async<kBlockN, kHeadDim, Cfg::kThreads>(s_k, k + n0 * p.k_row_stride, p.k_row_stride,
                                                        p.seqlen_k - n0, tid);
  fa::load_tile_async<kBlockN, kHeadDim, Cfg::kThreads>(s_v, v + n0 * p.v_row_stride, p.v_row_stride,
                                                        p.seqlen_k - n0, tid);
  fa::cp_async_commit();

  const fa::LaneOffsets lo(lane);
  float dk[kMT][kDT][4], dv[kMT][kDT][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) dk[mt][dt][e] = dv[mt][dt][e] = 0.f;

  // Query rows that can see this key block: i + offset >= n0 under the causal mask. The (head, query
  // block) pairs of the GQA group are walked as one sequence t = 0 .. steps-1 so that the pipeline runs
  // across head boundaries too.
  const int m_begin = Is_causal ? max(0, (n0 - causal_offset) / kBlockM) : 0;
  const int m_blocks = (p.seqlen_q + kBlockM - 1) / kBlockM;
  const int per_head = max(0, m_blocks - m_begin), steps = group * per_head;
  const int key_row0 = n0 + warp * 16 * kMT + lane / 4;  // this thread's first key row (rows g, g+8)

  // Copies of step t into buffer `stage`: Q and dO tiles by cp.async, LSE and D of row tid by plain loads
  // into registers (stored to shared memory by put_stats, after the loads had the products to land).
  float next_lse = 0.f, next_delta = 0.f;
  const auto issue = [&](int t, int stage) {
    const int h = kv_head * group + t / per_head, m0 = (m_begin + t % per_head) * kBlockM;
    const Element* q = static_cast<const Element*>(p.q) + batch * p.q_batch_stride + h * p.q_head_stride;
    const Element* d_o = static_cast<const Element*>(p.d_o) + batch * p.o_batch_stride + h * p.o_head_stride;
    fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_q0 + stage * kQBytes, q + m0 * p.q_row_stride,
                                                          p.q_row_stride, p.seqlen_q - m0, tid);
    fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_do0 + stage * kQBytes, d_o + m0 * p.o_row_stride,
                                                          p.o_row_stride, p.seqlen_q - m0, tid);
    fa::cp_async_commit();
    const long long stats = (static_cast<long long>(batch) * p.heads_q + h) * p.seqlen_q + m0 + tid;
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

  // dK = scale * dS^T Q (dS is the gradient of the scaled scores); dV as accumulated.
  const float dk_scale = fa::dk_scale_of(scale_log2);
  Element* dk_out = static_cast<Element*>(p.d_k) + batch * p.k_batch_stride + kv_head * p.k_head_stride;
  Element* dv_out = static_cast<Element*>(p.d_v) + batch * p.v_batch_stride + kv_head * p.v_head_stride;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int key = key_row0 + 16 * mt + 8 * hh;
      if (key >= p.seqlen_k) continue;
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        const int col = 8 * dt + 2 * (lane % 4);
        *reinterpret_cast<unsigned*>(dk_out + key * p.k_row_stride + col) = fa::ElementTraits<Element>::pack(
            dk[mt][dt][2 * hh] * dk_scale, dk[mt][dt][2 * hh + 1] * dk_scale);
        *reinterpret_cast<unsigned*>(dv_out + key * p.v_row_stride + col) =
            fa::ElementTraits<Element>::pack(dv[mt][dt][2 * hh], dv[mt][dt][2 * hh + 1]);
      }
    }
}

// Step 2 (kDqAtomic = 0): grid (ceil(N_q / kBlockM), H_q, B), block 32 * kNWarps. Deterministic: each dQ
// element is summed by one thread in a fixed order.
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, bool Is_causal>
__global__ void __launch_bounds__(32 * kNWarps)
    fa2_sm80_bwd_dq(const __grid_constant__ fa::AttentionParams p) {
  using Cfg = fa2bwd::BwdConfig<kHeadDim, kBlockM, kBlockN, kNWarps, 1, 0>;
  static_assert(kBlockM % (16 * kNWarps) == 0 && kBlockM / kNWarps / 16 <= 2, "dQ: 1-2 query tiles per warp");
  constexpr int kMT = kBlockM / kNWarps / 16, kNT = kBlockN / 8, kDT = Cfg::kDT, kRowBytes = Cfg::kRowBytes;
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int m_block = blockIdx.x, head = blockIdx.y, batch = blockIdx.z;
  const int kv_head = head / (p.heads_q / p.heads_kv), m0 = m_block * kBlockM;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const float scale_log2 = fa::scale_log2_of(p);

  const unsigned s_q = fa::smem_addr(smem), s_do = s_q + kBlockM * kRowBytes;
  const unsigned s_k = s_do + kBlockM * kRowBytes, s_v = s_k + kBlockN * kRowBytes;
  const Element* q = static_cast<const Element*>(p.q) + batch * p.q_batch_stride + head * p.q_head_stride;
  const Element* d_o = static_cast<const Element*>(p.d_o) + batch * p.o_batch_stride + head * p.o_head_stride;
  const Element* k = static_cast<const Element*>(p.k) + batch * p.k_batch_stride + kv_head * p.k_head_stride;
  const Element* v = static_cast<const Element*>(p.v) + batch * p.v_batch_stride + kv_head * p.v_head_stride;
  fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_q, q + m0 * p.q_row_stride, p.q_row_stride,
                                                        p.seqlen_q - m0, tid);
  fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_do, d_o + m0 * p.o_row_stride, p.o_row_stride,
                                                        p.seqlen_q - m0, tid);
  fa::cp_async_commit();

  const fa::LaneOffsets lo(lane);
  const long long stats = (static_cast<long long>(batch) * p.heads_q + head) * p.seqlen_q;
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
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) dq[mt][dt][e] = 0.f;

  int n_blocks = (p.seqlen_k + kBlockN - 1) / kBlockN;
  if (Is_causal) {
    const int last_visible = m0 + kBlockM - 1 + causal_offset;
    n_blocks = min(n_blocks, last_visible < 0 ? 0 : last_visible / kBlockN + 1);
  }
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
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = dp[mt][nt][e] = 0.f;
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
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) dq[mt][dt][e] = 0.f;
#endif
    fa::warp_pv<Element, kMT, kNT, kDT>(dq, s, s_k + lo.row_a * kRowBytes, lo);  // dQ += dS K
    __syncthreads();  // every warp done with K_j, V_j before the next block overwrites them
  }
  fa::cp_async_wait<0>();

  const float scale = scale_log2 * fa::kLn2;
  Element* dq_out = static_cast<Element*>(p.d_q) + batch * p.o_batch_stride + head * p.o_head_stride;
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
