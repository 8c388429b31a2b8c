// fa1: the FlashAttention-1 loop order. The outer loop over key/value blocks is the sequence of launches
// (params.step = key block j, one launch each); the inner loop over query blocks is the grid. Each CTA
// loads its Q block and K_j, V_j, reads the running O (fp32), m and l of its rows from device memory,
// applies one online-softmax step, and writes them back; the last step normalises and writes O and LSE.
// So O, m, l make a round trip through device memory at every outer step: the traffic FlashAttention-2
// removed by swapping the loops (compare fa2_sm80_fwd.cu, same tensor-core products).
#include "fa_arch.h"
#include "fa_block_range.cuh"
#include "fa_copy.cuh"
#include "fa_epilogue.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_tile_coords.cuh"
#include "fa_warp_mma.cuh"

template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, bool Is_causal>
__global__ void __launch_bounds__(fa::kWarpSize* kNWarps)
    fa1_fwd_step(const __grid_constant__ fa::AttentionParams p) {
  constexpr int kThreads = fa::kWarpSize * kNWarps, kWarpRows = kBlockM / kNWarps, kMT = kWarpRows / 16;
  constexpr int kNT = kBlockN / 8, kDT = kHeadDim / 8, kRowBytes = kHeadDim * 2;
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256, "head dim 64, 128 or 256");
  static_assert(kBlockM % (16 * kNWarps) == 0 && kMT <= 4, "each warp owns 1 to 4 whole 16-row tiles");
  static_assert(kBlockN % 16 == 0, "whole 16-key P.V steps");
  static_assert((kBlockN * kHeadDim / 8) % kThreads == 0 && (kBlockM * kHeadDim / 8) % kThreads == 0,
                "tile copies split evenly over the threads");
  static_assert((kBlockM + 2 * kBlockN) * kRowBytes <= fa::kMaxSharedBytesPerBlock,
                "shared memory per block");
  extern __shared__ __align__(128) unsigned char smem[];

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const fa::QueryTile tile = fa::query_tile<kBlockM>(p);
  const int m0 = tile.m0, j = p.step, n0 = j * kBlockN;
  const int last_step = (p.seqlen_k + kBlockN - 1) / kBlockN - 1;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const bool fully_masked =
      !fa::key_block_visible<Is_causal>(j, m0, kBlockM, kBlockN, {p.seqlen_k, causal_offset});
  if (fully_masked && j != 0 && j != last_step) return;  // nothing to add, state stays in memory
  const float scale_log2 = fa::scale_log2_of(p);

  const unsigned s_q = fa::smem_addr(smem), s_k = s_q + kBlockM * kRowBytes, s_v = s_k + kBlockN * kRowBytes;
  const Element* q = fa::q_slice<Element>(p, tile.batch, tile.head);
  const Element* k = fa::k_slice<Element>(p, tile.batch, tile.kv_head);
  const Element* v = fa::v_slice<Element>(p, tile.batch, tile.kv_head);
  if (!fully_masked) {
    fa::load_tile_async<kBlockM, kHeadDim, kThreads>(s_q, q + m0 * p.q_row_stride, p.q_row_stride,
                                                     p.seqlen_q - m0, tid);
    fa::load_tile_async<kBlockN, kHeadDim, kThreads>(s_k, k + n0 * p.k_row_stride, p.k_row_stride,
                                                     p.seqlen_k - n0, tid);
    fa::load_tile_async<kBlockN, kHeadDim, kThreads>(s_v, v + n0 * p.v_row_stride, p.v_row_stride,
                                                     p.seqlen_k - n0, tid);
    fa::cp_async_commit();
  }

  // The running state of this thread's rows, from device memory (or fresh at the first step).
  const long long bh_row0 = fa::row_index0(p, tile.batch, tile.head);
  const int row0 = m0 + warp * kWarpRows + lane / 4;
  float o[kMT][kDT][4];
  fa::OnlineSoftmax<kMT> softmax;
  softmax.init();
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 16 * mt + 8 * h;
      const bool load = j != 0 && row < p.seqlen_q;
      const long long idx = bh_row0 + row;
      if (load) {
        softmax.row_max[2 * mt + h] = p.scratch_m[idx];
        softmax.row_sum[2 * mt + h] = lane % 4 == 0 ? p.scratch_l[idx] : 0.f;  // quad-partial form
      }
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          o[mt][dt][2 * h + e] = load ? p.scratch_o[idx * kHeadDim + 8 * dt + 2 * (lane % 4) + e] : 0.f;
    }

  if (!fully_masked) {
    fa::cp_async_wait<0>();
    __syncthreads();
    const fa::LaneOffsets lo(lane);
    float s[kMT][kNT][4];
    fa::clear_accumulators(s);
    fa::warp_qk<Element, kMT, kNT, kHeadDim>(s, s_q + (warp * kWarpRows + lo.row_a) * kRowBytes,
                                             s_k + lo.row_b * kRowBytes, lo);
    if (fa::key_block_needs_mask(j, kBlockN,
                                 fa::unmasked_key_limit<Is_causal>(m0, {p.seqlen_k, causal_offset})))
      fa::apply_mask<Is_causal>(s, row0, n0 + 2 * (lane % 4), p.seqlen_k, causal_offset);
    softmax.step(s, o, scale_log2);
    fa::warp_pv<Element, kMT, kNT, kDT>(o, s, s_v + lo.row_a * kRowBytes, lo);
    fa::after_key_block(o, softmax.row_sum);
  }

  if (j == last_step) {
    fa::normalise_and_write_lse(o, softmax, true, scale_log2, p.lse + bh_row0 + row0, p.seqlen_q - row0,
                                lane);
    fa::store_o_from_registers<Element>(
        o, fa::o_slice<Element>(p, tile.batch, tile.head) + row0 * p.o_row_stride + 2 * (lane % 4),
        p.o_row_stride, p.seqlen_q - row0);
    return;
  }
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 16 * mt + 8 * h;
      const float sum = fa::quad_sum(softmax.row_sum[2 * mt + h]);  // all 32 lanes, before any branch
      if (row >= p.seqlen_q) continue;
      fa::store_row_state<kHeadDim>(p, bh_row0 + row, o, mt, h, softmax.row_max[2 * mt + h], sum, lane);
    }
}
