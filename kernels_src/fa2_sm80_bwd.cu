// fa2_sm80 backward: FlashAttention-2's gradients on mma.sync, deterministic by construction.
//
//   step 0  fa2_sm80_bwd_preprocess: D = rowsum(dO * O) per query row (fp32).
//   step 1  fa2_sm80_bwd_dkdv: one CTA per (key block, key/value head, batch); loops over the query heads
//           of its GQA group and their query blocks; recomputes S^T = K Q^T and P^T from the stored LSE,
//           dV += P^T dO, dP^T = V dO^T, dS^T = P^T (dP^T - D), dK += dS^T Q. Each warp owns 16 * kMT key
//           rows, so S^T, P^T and dS^T stay in registers and feed the next mma as A fragments.
//   step 2  fa2_sm80_bwd_dq: one CTA per (query block, head, batch); loops over key blocks; recomputes
//           S, P, dP = dO V^T, dS and accumulates dQ += dS K in registers.
// dQ by a separate pass instead of fp32 atomics: two extra products (S and dP again), but no atomics
// and the same bits on every run (the deterministic flag of issue 5; the atomic variant is not written).
//
// STATUS (2026-11-29): compiles under NVRTC for sm_80/sm_90a; never run on a GPU yet (the session's
// device time was spent on the forward). The [gpu] test in tests/kernels_src checks it against numerics.
#include "fa_backward.cuh"
#include "fa_copy.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_warp_mma.cuh"

namespace fa2bwd {

template <int kHeadDim, int kBlockM, int kBlockN, int kNWarps>
struct BwdConfig {
  static constexpr int kThreads = 32 * kNWarps;
  static constexpr int kRowBytes = kHeadDim * 2;
  static constexpr int kDT = kHeadDim / 8;
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256, "head dim 64, 128 or 256");
  static_assert(kNWarps == 4 || kNWarps == 8, "4 or 8 warps");
  static_assert(kBlockM % 16 == 0 && kBlockN % 16 == 0, "whole 16-wide k-steps");
  static_assert((kBlockM * kHeadDim / 8) % kThreads == 0 && (kBlockN * kHeadDim / 8) % kThreads == 0,
                "tile copies split evenly over the threads");
  static constexpr int kSmemBytes = 2 * (kBlockM + kBlockN) * kRowBytes + 2 * kBlockM * 4;
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block");
};

}  // namespace fa2bwd

// Step 0: one warp per query row; grid ceil(B * H_q * N_q / kNWarps), block 32 * kNWarps.
template <typename Element, int kHeadDim, int kNWarps>
__global__ void __launch_bounds__(32 * kNWarps)
    fa2_sm80_bwd_preprocess(const __grid_constant__ fa::AttentionParams p) {
  const long long row = static_cast<long long>(blockIdx.x) * kNWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= static_cast<long long>(p.batch) * p.heads_q * p.seqlen_q) return;
  const int i = static_cast<int>(row % p.seqlen_q);
  const long long bh = row / p.seqlen_q;
  const int head = static_cast<int>(bh % p.heads_q), batch = static_cast<int>(bh / p.heads_q);
  const long long offset = batch * p.o_batch_stride + head * p.o_head_stride + i * p.o_row_stride;
  const Element* o = static_cast<const Element*>(static_cast<const void*>(p.o)) + offset;
  const Element* d_o = static_cast<const Element*>(p.d_o) + offset;  // dO shares O's strides
  float acc = 0.f;
  for (int e = lane; e < kHeadDim; e += 32) acc += static_cast<float>(o[e]) * static_cast<float>(d_o[e]);
  for (int s = 16; s > 0; s /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, s);
  if (lane == 0) p.delta[row] = acc;
}

// Step 1: grid (ceil(N_k / kBlockN), H_kv, B), block 32 * kNWarps.
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, bool Is_causal>
__global__ void __launch_bounds__(32 * kNWarps)
    fa2_sm80_bwd_dkdv(const __grid_constant__ fa::AttentionParams p) {
  using Cfg = fa2bwd::BwdConfig<kHeadDim, kBlockM, kBlockN, kNWarps>;
  static_assert(kBlockN % (16 * kNWarps) == 0 && kBlockN / kNWarps / 16 <= 2,
                "dK/dV: 1-2 key tiles per warp");
  constexpr int kMT = kBlockN / kNWarps / 16, kNT = kBlockM / 8, kDT = Cfg::kDT, kRowBytes = Cfg::kRowBytes;
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int n_block = blockIdx.x, kv_head = blockIdx.y, batch = blockIdx.z;
  const int n0 = n_block * kBlockN, group = p.heads_q / p.heads_kv;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const float scale_log2 = fa::scale_log2_of(p);

  const unsigned s_k = fa::smem_addr(smem), s_v = s_k + kBlockN * kRowBytes;
  const unsigned s_q = s_v + kBlockN * kRowBytes, s_do = s_q + kBlockM * kRowBytes;
  float* s_lse = reinterpret_cast<float*>(smem + 2 * (kBlockM + kBlockN) * kRowBytes);  // log2 units
  float* s_delta = s_lse + kBlockM;

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

  // Query rows that can see this key block: i + offset >= n0 under the causal mask.
  const int m_begin = Is_causal ? max(0, (n0 - causal_offset) / kBlockM) : 0;
  const int m_blocks = (p.seqlen_q + kBlockM - 1) / kBlockM;
  const int key_row0 = n0 + warp * 16 * kMT + lane / 4;  // this thread's first key row (rows g, g+8)

  for (int h = kv_head * group; h < (kv_head + 1) * group; ++h) {
    const Element* q = static_cast<const Element*>(p.q) + batch * p.q_batch_stride + h * p.q_head_stride;
    const Element* d_o = static_cast<const Element*>(p.d_o) + batch * p.o_batch_stride + h * p.o_head_stride;
    const long long stats = (static_cast<long long>(batch) * p.heads_q + h) * p.seqlen_q;
    for (int mb = m_begin; mb < m_blocks; ++mb) {
      const int m0 = mb * kBlockM;
      fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_q, q + m0 * p.q_row_stride, p.q_row_stride,
                                                            p.seqlen_q - m0, tid);
      fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_do, d_o + m0 * p.o_row_stride, p.o_row_stride,
                                                            p.seqlen_q - m0, tid);
      fa::cp_async_commit();
      for (int r = tid; r < kBlockM; r += Cfg::kThreads) {
        const bool valid = m0 + r < p.seqlen_q;
        s_lse[r] = fa::lse_log2_for_backward(valid ? p.lse[stats + m0 + r] : 0.f, valid);
        s_delta[r] = valid ? p.delta[stats + m0 + r] : 0.f;
      }
      fa::cp_async_wait<0>();
      __syncthreads();

      // S^T = K Q^T: this warp's key rows against all kBlockM queries.
      float s[kMT][kNT][4], dp[kMT][kNT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) s[mt][nt][e] = dp[mt][nt][e] = 0.f;
      const unsigned warp_rows = (warp * 16 * kMT + lo.row_a) * kRowBytes;
      fa::warp_qk<Element, kMT, kNT, kHeadDim>(s, s_k + warp_rows, s_q + lo.row_b * kRowBytes, lo);
      // P^T = 2^(s * scale_log2 - lse_log2[query]); masked (causal, padding keys) -> 0.
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int key = key_row0 + 16 * mt + 8 * hh;
#pragma unroll
          for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int col = 8 * nt + 2 * (lane % 4) + e, query = m0 + col;
              const bool visible = key < fa::key_limit<Is_causal>(query, p.seqlen_k, causal_offset);
              float& x = s[mt][nt][2 * hh + e];
              x = visible ? fa::exp2_approx(fmaf(x, scale_log2, -s_lse[col])) : 0.f;
            }
        }
      fa::warp_pv<Element, kMT, kNT, kDT>(dv, s, s_do + lo.row_a * kRowBytes, lo);  // dV += P^T dO
      fa::warp_qk<Element, kMT, kNT, kHeadDim>(dp, s_v + warp_rows, s_do + lo.row_b * kRowBytes, lo);  // dP^T
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            dp[mt][nt][e] =
                fa::ds_of(s[mt][nt][e], dp[mt][nt][e], s_delta[8 * nt + 2 * (lane % 4) + (e % 2)]);
      fa::warp_pv<Element, kMT, kNT, kDT>(dk, dp, s_q + lo.row_a * kRowBytes, lo);  // dK += dS^T Q
#ifndef FA_MUTANT_BWD_RACE  // [bwd-race] no barrier before the next Q/dO tiles overwrite these
      __syncthreads();
#endif
    }
  }

  fa::cp_async_wait<0>();  // K/V copies of a block no query sees must land before the CTA exits

  // dK = scale * dS^T Q (dS is the gradient of the scaled scores); dV as accumulated.
#ifdef FA_MUTANT_BWD_DK_MISSING_SCALE
  const float dk_scale = 1.f;  // [bwd-dk-missing-scale] dK not multiplied by the softmax scale
#else
  const float dk_scale = scale_log2 * fa::kLn2;
#endif
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

// Step 2: grid (ceil(N_q / kBlockM), H_q, B), block 32 * kNWarps.
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, bool Is_causal>
__global__ void __launch_bounds__(32 * kNWarps)
    fa2_sm80_bwd_dq(const __grid_constant__ fa::AttentionParams p) {
  using Cfg = fa2bwd::BwdConfig<kHeadDim, kBlockM, kBlockN, kNWarps>;
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
          const float prob = fa::exp2_approx(fmaf(s[mt][nt][e], scale_log2, -lse_log2[r]));
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
