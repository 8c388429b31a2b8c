// fa1 backward: the FlashAttention-1 loop order (Algorithm 4 of the FlashAttention paper), the mirror of
// fa1_fwd.cu. The outer loop over key/value blocks j is the sequence of launches (params.step = j); inside
// a launch one CTA per (key/value head, batch) walks the inner loop over the query blocks i of its GQA
// group: it keeps K_j, V_j and the dK_j, dV_j accumulators on chip, and for every query block reads
// Q_i, dO_i, LSE_i, D_i, recomputes P from the LSE (as the official FlashAttention-1 code does, not from
// m and l), and reads dQ_i (fp32) from device memory, adds dS K_j and writes it back: dQ makes a round
// trip through device memory at every outer step, the traffic FlashAttention-2 removed. dK_j, dV_j are
// written at the end of the launch. Launches are ordered on the stream, so the read-modify-write of dQ
// needs no atomics (one CTA owns a query head's rows within a launch).
//
// Around the steps: fa_bwd_preprocess (D = rowsum(dO * O)) before, fa_bwd_dq_convert (fp32 dQ -> dtype,
// times the softmax scale) after. Step 0 walks every query block, so it writes every dQ row (zeros for
// rows that see no key) and the later steps may skip blocks the causal mask hides from key block j.
// The products per (query block, key block) pair are those of fa2_sm80_bwd (dkdv_block, dq_block in
// fa_backward.cuh): only the loop order and the memory traffic differ.
#include "fa_arch.h"
#include "fa_block_range.cuh"
#include "fa_bwd_blocks.cuh"
#include "fa_copy.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_tile_coords.cuh"
#include "fa_warp_mma.cuh"

// Grid (H_kv, B), block 32 * kNWarps; dynamic shared memory (2 kBlockN + 2 kBlockM) * kHeadDim * 2
// + kBlockN * kBlockM * 2 + 2 * kBlockM * 4 bytes.
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, bool Is_causal>
__global__ void __launch_bounds__(fa::kWarpSize* kNWarps)
    fa1_bwd_step(const __grid_constant__ fa::AttentionParams p) {
  constexpr int kThreads = fa::kWarpSize * kNWarps, kMT = kBlockN / kNWarps / 16, kDT = kHeadDim / 8;
  constexpr int kRowBytes = kHeadDim * 2;
  static_assert(kHeadDim == 64 || kHeadDim == 128, "head dim 64 or 128");
  static_assert(kBlockN % (16 * kNWarps) == 0 && kMT <= 2, "each warp owns 1 or 2 whole 16-key tiles");
  static_assert(kBlockM % 32 == 0 && kBlockM <= kThreads, "query blocks of 32k rows, one thread per row");
  static_assert((kBlockN * kHeadDim / 8) % kThreads == 0 && (kBlockM * kHeadDim / 8) % kThreads == 0,
                "tile copies split evenly over the threads");
  static_assert((2 * kBlockN + 2 * kBlockM) * kRowBytes + kBlockN * kBlockM * 2 + 2 * kBlockM * 4 <=
                    fa::kMaxSharedBytesPerBlock,
                "shared memory per block");
  using Dq = fa::DqSplit<kBlockM, kHeadDim, kNWarps>;
  extern __shared__ __align__(128) unsigned char smem[];

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int kv_head = blockIdx.x, batch = blockIdx.y, group = p.heads_q / p.heads_kv;
  const int j = p.step, n0 = j * kBlockN;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const float scale_log2 = fa::scale_log2_of(p);

  const unsigned s_k = fa::smem_addr(smem), s_v = s_k + kBlockN * kRowBytes;
  const unsigned s_q = s_v + kBlockN * kRowBytes, s_do = s_q + kBlockM * kRowBytes;
  const unsigned s_ds = s_do + kBlockM * kRowBytes;
  float* s_lse =
      reinterpret_cast<float*>(smem + (2 * kBlockN + 2 * kBlockM) * kRowBytes + kBlockN * kBlockM * 2);
  float* s_delta = s_lse + kBlockM;

  const Element* k = fa::k_slice<Element>(p, batch, kv_head);
  const Element* v = fa::v_slice<Element>(p, batch, kv_head);
  fa::load_tile_async<kBlockN, kHeadDim, kThreads>(s_k, k + n0 * p.k_row_stride, p.k_row_stride,
                                                   p.seqlen_k - n0, tid);
  fa::load_tile_async<kBlockN, kHeadDim, kThreads>(s_v, v + n0 * p.v_row_stride, p.v_row_stride,
                                                   p.seqlen_k - n0, tid);
  fa::cp_async_commit();

  const fa::LaneOffsets lo(lane);
  float dk[kMT][kDT][4], dv[kMT][kDT][4];
  fa::clear_accumulators(dk);
  fa::clear_accumulators(dv);

  // Step 0 initialises every dQ row; later steps start at the first query block that sees key block j.
  const int m_begin = j > 0 ? fa::first_query_block<Is_causal, kBlockM>(n0, causal_offset) : 0;
  const int m_blocks = (p.seqlen_q + kBlockM - 1) / kBlockM;
  const int key_row0 = n0 + warp * 16 * kMT + lane / 4;
  const int warp_m = warp % Dq::kWarpsM, warp_d = warp / Dq::kWarpsM;
  const int q_first = warp_m * Dq::kMT * 16;
#ifdef FA_MUTANT_BWD_DQ_OVERWRITE
  const bool accumulate =
      false;  // [bwd-dq-overwrite] dQ_i written over at every outer step, not read and added
#else
  const bool accumulate = j > 0;  // step 0 finds no earlier dQ in memory
#endif

  for (int h = kv_head * group; h < (kv_head + 1) * group; ++h) {
    const Element* q = fa::q_slice<Element>(p, batch, h);
    const Element* d_o = fa::d_o_slice<Element>(p, batch, h);
    const long long stats = fa::row_index0(p, batch, h);
    float* dq_rows = p.dq_accum + stats * kHeadDim;  // (N_q, D) fp32 of this head
    for (int mb = m_begin; mb < m_blocks; ++mb) {
      const int m0 = mb * kBlockM;
      fa::load_tile_async<kBlockM, kHeadDim, kThreads>(s_q, q + m0 * p.q_row_stride, p.q_row_stride,
                                                       p.seqlen_q - m0, tid);
      fa::load_tile_async<kBlockM, kHeadDim, kThreads>(s_do, d_o + m0 * p.o_row_stride, p.o_row_stride,
                                                       p.seqlen_q - m0, tid);
      fa::cp_async_commit();
      if (tid < kBlockM) {
        const bool valid = m0 + tid < p.seqlen_q;
        s_lse[tid] = fa::lse_log2_for_backward(valid ? p.lse[stats + m0 + tid] : 0.f, valid);
        s_delta[tid] = valid ? p.delta[stats + m0 + tid] : 0.f;
      }
      fa::cp_async_wait<0>();
      __syncthreads();

      fa::dkdv_block<Element, kHeadDim, kBlockM, kMT, Is_causal, true>(
          dk, dv, {s_k, s_v, s_q, s_do, s_ds, s_lse, s_delta}, p, m0, warp * 16 * kMT, key_row0,
          causal_offset, scale_log2, lo, lane);
      __syncthreads();  // every warp's dS^T rows are in s_ds

      // dQ_i = dQ_i (device memory, fp32) + dS K_j.
      float dq[Dq::kMT][Dq::kDT][4];
      fa::dq_block<Element, kBlockM, kBlockN, kHeadDim, kNWarps>(dq, s_ds, s_k, warp, lo, lane);
#pragma unroll
      for (int mt = 0; mt < Dq::kMT; ++mt)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int row = m0 + q_first + 16 * mt + 8 * hh + lane / 4;
          if (row >= p.seqlen_q) continue;
#pragma unroll
          for (int dt = 0; dt < Dq::kDT; ++dt) {
            float2* dst = reinterpret_cast<float2*>(dq_rows + static_cast<long long>(row) * kHeadDim +
                                                    (warp_d * Dq::kDT + dt) * 8 + 2 * (lane % 4));
            float2 value = make_float2(dq[mt][dt][2 * hh], dq[mt][dt][2 * hh + 1]);
            if (accumulate) {
              const float2 old = *dst;
              value.x += old.x;
              value.y += old.y;
            }
            *dst = value;
          }
        }
#ifndef FA_MUTANT_BWD_RACE  // [bwd-race] no barrier before the next Q/dO, LSE/D and dS^T tiles overwrite
                            // these
      __syncthreads();
#endif
    }
  }
  fa::cp_async_wait<0>();  // K/V copies of a block no query sees must land before the CTA exits

  fa::store_dk_dv<Element>(dk, dv, fa::dk_scale_of(scale_log2), p, batch, kv_head, key_row0, lane);
}
