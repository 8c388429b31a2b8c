// fa2_sm80 forward: the FlashAttention-2 design on mma.sync tensor cores (sm_80 and later).
//
// One CTA per (query block of kBlockM rows, query head, batch). Q is loaded once; K and V blocks stream
// through rings of kStages shared-memory buffers filled by cp.async; the loop walks the key blocks from
// the last to the first, so the blocks that need a mask (causal diagonal, tail) come first and the rest
// run mask-free. Per block: S = Q K^T (m16n8k16, ldmatrix from swizzled tiles), online softmax in
// registers (exp2 with scale * log2(e) folded into one FFMA), P repacked in registers as the A operand
// of O += P V (V read with ldmatrix.trans), O normalised once at the end, LSE written for the backward.
//
// Copy/compute overlap: copies are committed in the order K0 V0 K1 V1 ...; at block j the V of block
// j+kStages-1 is issued before S = Q K_j and the K of block j+kStages before the softmax and P V, so
// with kStages = 1 the V load overlaps QK^T and the next K load overlaps softmax + PV (FlashAttention-2's
// schedule); deeper rings prefetch further ahead.
//
// Warp layout (a tunable): kWarpsN = 1 splits the query rows among the warps (FlashAttention-2: each
// warp owns 16 * kMT rows, no communication until the end); kWarpsN > 1 also splits each key block's
// columns among kWarpsN warps, each running its own online softmax over its columns, merged once at the
// end through shared memory (the FlashAttention-1 layout).
#include "fa_copy.cuh"
#include "fa_epilogue.cuh"
#include "fa_mask.cuh"
#include "fa_mma.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_types.cuh"

namespace fa2 {

// The tunables and the constraints between them. tuner/families/fa2_sm80.cpp mirrors every rule below
// (so that the tuner prunes before compiling); the static_asserts are the ground truth.
template <int kHeadDim_, int kBlockM_, int kBlockN_, int kNWarps_, int kStages_, int kWarpsN_, bool kQInRegs_,
          bool kEpilogueSmem_>
struct FwdConfig {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kNWarps = kNWarps_;
  static constexpr int kStages = kStages_;
  static constexpr int kWarpsN = kWarpsN_;
  static constexpr bool kQInRegs = kQInRegs_;
  static constexpr bool kEpilogueSmem = kEpilogueSmem_;

  static constexpr int kThreads = 32 * kNWarps;
  static constexpr int kWarpsM = kNWarps / kWarpsN;
  static constexpr int kWarpRows = kBlockM / kWarpsM;
  static constexpr int kWarpCols = kBlockN / kWarpsN;
  static constexpr int kMT = kWarpRows / 16;  // 16-row MMA tiles per warp
  static constexpr int kNT = kWarpCols / 8;   // 8-column score tiles per warp
  static constexpr int kDT = kHeadDim / 8;    // 8-column output tiles
  static constexpr int kRowBytes = kHeadDim * 2;
  static constexpr int kQBytes = kBlockM * kRowBytes;
  static constexpr int kKVTileBytes = kBlockN * kRowBytes;
  static constexpr int kMergeBytes = kWarpsN > 1 ? kBlockM* kHeadDim * 4 + 2 * kWarpsN* kBlockM * 4 : 0;
  static constexpr int kLoopBytes = kQBytes + 2 * kStages * kKVTileBytes;
  static constexpr int kSmemBytes = kLoopBytes > kQBytes + kMergeBytes ? kLoopBytes : kQBytes + kMergeBytes;

  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256, "head dim 64, 128 or 256");
  static_assert(kNWarps == 1 || kNWarps == 2 || kNWarps == 4 || kNWarps == 8, "1, 2, 4 or 8 warps");
  static_assert(kWarpsN >= 1 && kNWarps % kWarpsN == 0, "kWarpsN divides kNWarps");
  static_assert(kBlockM % (16 * kWarpsM) == 0, "each warp owns whole 16-row MMA tiles");
  static_assert(kBlockN % (16 * kWarpsN) == 0, "each warp owns whole 16-key P.V k-steps");
  static_assert(kMT >= 1 && kMT <= 4, "at most 4 row tiles per warp (registers)");
  static_assert(kStages >= 1 && kStages <= 4, "1 to 4 K/V buffers");
  static_assert((kBlockN * kHeadDim / 8) % kThreads == 0 && (kBlockM * kHeadDim / 8) % kThreads == 0,
                "tile copies split evenly over the threads");
  static_assert(kSmemBytes <= 227 * 1024, "within the sm_80/sm_90 opt-in shared memory per block");
};

template <typename Element, typename Cfg, bool Is_causal>
__device__ __forceinline__ void forward(const fa::AttentionParams& p, unsigned char* smem) {
  constexpr int kMT = Cfg::kMT, kNT = Cfg::kNT, kDT = Cfg::kDT, kStages = Cfg::kStages;
  constexpr int kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN, kHeadDim = Cfg::kHeadDim;
  constexpr int kRowBytes = Cfg::kRowBytes, kChunks = kHeadDim / 8;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / Cfg::kWarpsN, warp_n = warp % Cfg::kWarpsN;
  const int m_block = blockIdx.x, head = blockIdx.y, batch = blockIdx.z;
  const int kv_head = head / (p.heads_q / p.heads_kv);
  const int m0 = m_block * kBlockM;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const float scale_log2 = fa::scale_log2_of(p);

  int n_blocks = (p.seqlen_k + kBlockN - 1) / kBlockN;
  if (Is_causal) {
    // Keys past the block's last row's limit are never seen: stop before their blocks.
    const int last_visible = m0 + kBlockM - 1 + causal_offset;  // may be negative: no block at all
    n_blocks = min(n_blocks, last_visible < 0 ? 0 : last_visible / kBlockN + 1);
  }

  const Element* q = static_cast<const Element*>(p.q) + batch * p.q_batch_stride + head * p.q_head_stride +
                     m0 * p.q_row_stride;
  const Element* k = static_cast<const Element*>(p.k) + batch * p.k_batch_stride + kv_head * p.k_head_stride;
  const Element* v = static_cast<const Element*>(p.v) + batch * p.v_batch_stride + kv_head * p.v_head_stride;

  const unsigned s_q = fa::smem_addr(smem);
  const unsigned s_k = s_q + Cfg::kQBytes;
  const unsigned s_v = s_k + kStages * Cfg::kKVTileBytes;

  // Iteration j handles key block n_blocks - 1 - j and uses ring slot j % kStages.
  auto load_k = [&](int j) {
    const int nb = n_blocks - 1 - j;
    fa::load_tile_async<kBlockN, kHeadDim, Cfg::kThreads>(s_k + (j % kStages) * Cfg::kKVTileBytes,
                                                          k + nb * kBlockN * p.k_row_stride, p.k_row_stride,
                                                          p.seqlen_k - nb * kBlockN, tid);
  };
  auto load_v = [&](int j) {
    const int nb = n_blocks - 1 - j;
    fa::load_tile_async<kBlockN, kHeadDim, Cfg::kThreads>(s_v + (j % kStages) * Cfg::kKVTileBytes,
                                                          v + nb * kBlockN * p.v_row_stride, p.v_row_stride,
                                                          p.seqlen_k - nb * kBlockN, tid);
  };

  // Prologue: groups {Q, K_0}, V_0, K_1, ..., V_{S-2}, K_{S-1}; empty groups keep the count uniform.
  fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_q, q, p.q_row_stride, p.seqlen_q - m0, tid);
  if (n_blocks > 0) load_k(0);
  fa::cp_async_commit();
#pragma unroll
  for (int s = 1; s < kStages; ++s) {
    if (s - 1 < n_blocks) load_v(s - 1);
    fa::cp_async_commit();
    if (s < n_blocks) load_k(s);
    fa::cp_async_commit();
  }

  // Per-lane ldmatrix addressing. Lanes 0-7, 8-15, 16-23, 24-31 give the rows of matrices 0-3.
  // A operand (Q) and trans-B operand (V): row (l%8) + 8*((l/8)%2), chunk + l/16.
  // B operand (K): row (l%8) + 8*(l/16), chunk + (l/8)%2.
  const int row_a = (lane % 8) + 8 * ((lane / 8) % 2);
  const int row_b = (lane % 8) + 8 * (lane / 16);
  // Swizzled byte offset of logical chunk 2t + hi (t = kk % 4) within a 128-byte group of a row r with
  // r % 8 = lane % 8: ((2t + hi) ^ (lane % 8)) * 16. Precomputed so that the unrolled loops only add.
  int chunk_off_a[4], chunk_off_b[4];
#pragma unroll
  for (int t = 0; t < 4; ++t) {
    chunk_off_a[t] = ((2 * t + lane / 16) ^ (lane % 8)) * 16;
    chunk_off_b[t] = ((2 * t + (lane / 8) % 2) ^ (lane % 8)) * 16;
  }
  const unsigned q_frag_base = s_q + (warp_m * Cfg::kWarpRows + row_a) * kRowBytes;
  const int k_frag_row = (warp_n * Cfg::kWarpCols + row_b) * kRowBytes;
  const int v_frag_row = (warp_n * Cfg::kWarpCols + row_a) * kRowBytes;

  unsigned q_regs[Cfg::kQInRegs ? kMT : 1][Cfg::kQInRegs ? kHeadDim / 16 : 1][4];

  float o[kMT][kDT][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[mt][dt][e] = 0.f;
  fa::OnlineSoftmax<kMT> softmax;
  softmax.init();

  // This thread's first query row (global) and first key column within a block.
  const int row0 = m0 + warp_m * Cfg::kWarpRows + lane / 4;
  const int col0_in_block = warp_n * Cfg::kWarpCols + 2 * (lane % 4);
  // Blocks whose last key is visible to the CTA's first row and inside n_k need no mask.
  const int first_row_limit = Is_causal ? min(p.seqlen_k, m0 + causal_offset + 1) : p.seqlen_k;

  for (int j = 0; j < n_blocks; ++j) {
    const int nb = n_blocks - 1 - j;
    fa::cp_async_wait<2 * (kStages - 1)>();  // K_j landed (this thread's copies) ...
    __syncthreads();                         // ... and everyone's; V_{j-1}'s slot is free again
    if (j + kStages - 1 < n_blocks) load_v(j + kStages - 1);
    fa::cp_async_commit();

    if (Cfg::kQInRegs && j == 0) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int kk = 0; kk < kHeadDim / 16; ++kk)
          fa::ldmatrix_x4(q_regs[Cfg::kQInRegs ? mt : 0][Cfg::kQInRegs ? kk : 0],
                          q_frag_base + mt * 16 * kRowBytes + (kk / 4) * 128 + chunk_off_a[kk % 4]);
    }

    // S = Q K^T over this warp's kWarpCols keys.
    float s[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;
    const unsigned k_tile = s_k + (j % kStages) * Cfg::kKVTileBytes + k_frag_row;
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      unsigned a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        if constexpr (Cfg::kQInRegs) {
#pragma unroll
          for (int e = 0; e < 4; ++e) a[mt][e] = q_regs[mt][kk][e];
        } else {
          fa::ldmatrix_x4(a[mt], q_frag_base + mt * 16 * kRowBytes + (kk / 4) * 128 + chunk_off_a[kk % 4]);
        }
      }
#pragma unroll
      for (int np = 0; np < kNT / 2; ++np) {
        unsigned b[4];
        fa::ldmatrix_x4(b, k_tile + np * 16 * kRowBytes + (kk / 4) * 128 + chunk_off_b[kk % 4]);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          fa::mma_16816<Element>(s[mt][2 * np], a[mt], b[0], b[1]);
          fa::mma_16816<Element>(s[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }
    if ((nb + 1) * kBlockN > first_row_limit) {
      fa::apply_mask<Is_causal>(s, row0, nb * kBlockN + col0_in_block, p.seqlen_k, causal_offset);
    }

    fa::cp_async_wait<2 * (kStages - 1)>();  // V_j landed ...
    __syncthreads();                         // ... and every warp is done with K_j's slot
    if (j + kStages < n_blocks) load_k(j + kStages);
    fa::cp_async_commit();

    softmax.step(s, o, scale_log2);

    // O += P V: P (fp32 C fragments) rounded to Element and repacked as A fragments, never leaving
    // registers.
    const unsigned v_tile = s_v + (j % kStages) * Cfg::kKVTileBytes + v_frag_row;
#pragma unroll
    for (int kk = 0; kk < Cfg::kWarpCols / 16; ++kk) {
      unsigned a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        a[mt][0] = fa::ElementTraits<Element>::pack(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        a[mt][1] = fa::ElementTraits<Element>::pack(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        a[mt][2] = fa::ElementTraits<Element>::pack(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        a[mt][3] = fa::ElementTraits<Element>::pack(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < kHeadDim / 16; ++dp) {
        unsigned b[4];
        fa::ldmatrix_x4_trans(b, v_tile + kk * 16 * kRowBytes + (dp / 4) * 128 + chunk_off_a[dp % 4]);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          fa::mma_16816<Element>(o[mt][2 * dp], a[mt], b[0], b[1]);
          fa::mma_16816<Element>(o[mt][2 * dp + 1], a[mt], b[2], b[3]);
        }
      }
    }
    if constexpr (fa::kNormalizeInLoop) {
      fa::divide_by_row_sums(o, softmax.row_sum);
    }
  }
  fa::cp_async_wait<0>();  // nothing may land in shared memory while the epilogue reuses it
  if constexpr (Cfg::kEpilogueSmem && Cfg::kWarpsN == 1) {
    // cp_async_wait covers this thread's copies only. Without a key block (n_blocks == 0: a causal CTA
    // above the diagonal when n_q > n_k) no loop barrier follows the Q copies, so another thread's copy
    // into this warp's Q rows could still land after the warp stages O there: compute-sanitizer's
    // racecheck reported those WAW hazards on the H200. One barrier per CTA, after the loop.
    __syncthreads();
  }

  bool sums_are_partial = true;
  if constexpr (Cfg::kWarpsN > 1) {
    // FlashAttention-1 layout: merge the kWarpsN partial (m, l, O) of each row through shared memory.
    __syncthreads();
    float* merge_o = reinterpret_cast<float*>(smem + Cfg::kQBytes);  // (kBlockM, D) fp32
    float* merge_m = merge_o + kBlockM * kHeadDim;                   // (kWarpsN, kBlockM)
    float* merge_l = merge_m + Cfg::kWarpsN * kBlockM;
    const int local_row0 = warp_m * Cfg::kWarpRows + lane / 4;
#pragma unroll
    for (int r = 0; r < 2 * kMT; ++r) {
      const float sum = fa::quad_sum(softmax.row_sum[r]);
      if (lane % 4 == 0) {
        const int row = local_row0 + 16 * (r / 2) + 8 * (r % 2);
        merge_m[warp_n * kBlockM + row] = softmax.row_max[r];
        merge_l[warp_n * kBlockM + row] = sum;
      }
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 2 * kMT; ++r) {
      const int row = local_row0 + 16 * (r / 2) + 8 * (r % 2);
      float m_all = fa::neg_inf();
      for (int w = 0; w < Cfg::kWarpsN; ++w) m_all = fmaxf(m_all, merge_m[w * kBlockM + row]);
      const float m_all_log2 = fa::guarded_max_log2(m_all, scale_log2);
      float l_all = 0.f;
      for (int w = 0; w < Cfg::kWarpsN; ++w)
        l_all +=
            merge_l[w * kBlockM + row] * fa::part_weight(merge_m[w * kBlockM + row], m_all_log2, scale_log2);
      const float mine = fa::part_weight(softmax.row_max[r], m_all_log2, scale_log2);
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        o[r / 2][dt][2 * (r % 2)] *= mine;
        o[r / 2][dt][2 * (r % 2) + 1] *= mine;
      }
      softmax.row_max[r] = m_all;
      softmax.row_sum[r] = l_all;
    }
    sums_are_partial = false;
    // Sum the rescaled partial outputs, one warp column at a time (once per CTA: simplicity over speed).
    for (int w = 0; w < Cfg::kWarpsN; ++w) {
      if (warp_n == w) {
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                float& dst = merge_o[(local_row0 + 16 * mt + 8 * h) * kHeadDim + 8 * dt + 2 * (lane % 4) + e];
                dst = (w == 0 ? 0.f : dst) + o[mt][dt][2 * h + e];
              }
      }
      __syncthreads();
    }
    if (warp_n != 0) return;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            o[mt][dt][2 * h + e] =
                merge_o[(local_row0 + 16 * mt + 8 * h) * kHeadDim + 8 * dt + 2 * (lane % 4) + e];
  }

  const int warp_row0 = m0 + warp_m * Cfg::kWarpRows;
  float* lse = p.lse + (static_cast<long long>(batch) * p.heads_q + head) * p.seqlen_q;
  fa::normalise_and_write_lse(o, softmax, sums_are_partial, !fa::kNormalizeInLoop, scale_log2, lse + row0,
                              p.seqlen_q - row0, lane);
  Element* o_base = static_cast<Element*>(p.o) + batch * p.o_batch_stride + head * p.o_head_stride;
  if constexpr (Cfg::kEpilogueSmem) {
    // The warp's own Q rows are free: only this warp ever read them.
    fa::store_o_through_shared<Element>(o, s_q + warp_m * Cfg::kWarpRows * kRowBytes,
                                        o_base + warp_row0 * p.o_row_stride, p.o_row_stride,
                                        p.seqlen_q - warp_row0, lane);
  } else {
    fa::store_o_from_registers<Element>(o, o_base + row0 * p.o_row_stride + 2 * (lane % 4), p.o_row_stride,
                                        p.seqlen_q - row0);
  }
  (void)kChunks;
}

}  // namespace fa2

// The kernel the runtime instantiates by name expression, e.g.
//   fa2_sm80_fwd<__nv_bfloat16, 128, 128, 64, 4, 1, 1, false, true, false>
// (Element, kHeadDim, kBlockM, kBlockN, kNWarps, kStages, kWarpsN, kQInRegs, kEpilogueSmem, Is_causal).
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, int kStages, int kWarpsN,
          bool kQInRegs, bool kEpilogueSmem, bool Is_causal>
__global__ void __launch_bounds__(32 * kNWarps)
    fa2_sm80_fwd(const __grid_constant__ fa::AttentionParams params) {
  extern __shared__ __align__(128) unsigned char smem[];
  using Cfg = fa2::FwdConfig<kHeadDim, kBlockM, kBlockN, kNWarps, kStages, kWarpsN, kQInRegs, kEpilogueSmem>;
  fa2::forward<Element, Cfg, Is_causal>(params, smem);
}
