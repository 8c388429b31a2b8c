// fa2_sm80 forward: the FlashAttention-2 design on mma.sync tensor cores (sm_80 and later).
//
// One CTA per (query block of kBlockM rows, query head, batch). Q is loaded once; K and V blocks stream
// through rings of kStages shared-memory buffers filled by cp.async; the loop walks the key blocks from
// the last to the first, so the blocks that need a mask (causal diagonal, tail) come first and the rest
// run mask-free. Per block: S = Q K^T (m16n8k16, ldmatrix from swizzled tiles), online softmax in
// registers (exp2 with scale * log2(e) folded into one FFMA), P repacked in registers as the A operand
// of O += P V (V read with ldmatrix.trans), O normalised once at the end, LSE written for the backward.
//
// Copy/compute overlap: fa_kv_ring.cuh (FlashAttention-2's schedule with kStages = 1, deeper rings
// prefetch further ahead).
//
// Warp layout (a tunable): kWarpsN = 1 splits the query rows among the warps (FlashAttention-2: each
// warp owns 16 * kMT rows, no communication until the end); kWarpsN > 1 also splits each key block's
// columns among kWarpsN warps, each running its own online softmax over its columns, merged once at the
// end through shared memory (the FlashAttention-1 layout).
#include "fa_arch.h"
#include "fa_block_range.cuh"
#include "fa_epilogue.cuh"
#include "fa_kv_ring.cuh"
#include "fa_mask.cuh"
#include "fa_softmax.cuh"
#include "fa_split_merge.cuh"
#include "fa_tile_coords.cuh"
#include "fa_warp_mma.cuh"

namespace fa2 {

// The tunables and the constraints between them. device/families/fa2_sm80.cpp mirrors every rule below
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

  static constexpr int kThreads = fa::kWarpSize * kNWarps;
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
  static_assert(kSmemBytes <= fa::kMaxSharedBytesPerBlock, "within the opt-in shared memory per block");
};

template <typename Element, typename Cfg, bool Is_causal>
__device__ __forceinline__ void forward(const fa::AttentionParams& p, unsigned char* smem) {
  constexpr int kMT = Cfg::kMT, kNT = Cfg::kNT, kStages = Cfg::kStages;
  constexpr int kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN, kHeadDim = Cfg::kHeadDim;
  constexpr int kRowBytes = Cfg::kRowBytes;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / Cfg::kWarpsN, warp_n = warp % Cfg::kWarpsN;
  const fa::QueryTile tile = fa::query_tile<kBlockM>(p);
  const int m0 = tile.m0;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const float scale_log2 = fa::scale_log2_of(p);

  const int n_blocks = fa::key_block_count<Is_causal, kBlockM, kBlockN>(m0, {p.seqlen_k, causal_offset});
  const Element* q = fa::q_slice<Element>(p, tile.batch, tile.head) + m0 * p.q_row_stride;
  const Element* k = fa::k_slice<Element>(p, tile.batch, tile.kv_head);
  const Element* v = fa::v_slice<Element>(p, tile.batch, tile.kv_head);
  const unsigned s_q = fa::smem_addr(smem);
  const unsigned s_k = s_q + Cfg::kQBytes;
  fa::load_tile_async<kBlockM, kHeadDim, Cfg::kThreads>(s_q, q, p.q_row_stride, p.seqlen_q - m0, tid);
  const fa::KvRingLastToFirst<Element, kBlockN, kRowBytes, Cfg::kThreads, kStages> ring{
      p, k, v, s_k, s_k + kStages * Cfg::kKVTileBytes, n_blocks, tid};
  ring.prologue();  // the Q copies join K_0's group

  // Per-lane ldmatrix addressing, fa_warp_mma.cuh's LaneOffsets written out (as are the products below,
  // which add Q in registers and the warp's columns): through the struct and warp_pv, ptxas scheduled the
  // kernel differently (CUDA 13.0). A (Q) and trans-B (V): row (l%8) + 8((l/8)%2), chunk + l/16; B (K): row
  // (l%8) + 8(l/16), chunk + (l/8)%2; chunk_off_*[t]: the swizzled offset of logical chunk 2t + hi.
  const int row_a = (lane % 8) + 8 * ((lane / 8) % 2);
  const int row_b = (lane % 8) + 8 * (lane / 16);
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

  float o[kMT][Cfg::kDT][4];
  fa::clear_accumulators(o);
  fa::OnlineSoftmax<kMT> softmax;
  softmax.init();

  // This thread's first query row (global) and first key column within a block.
  const int row0 = m0 + warp_m * Cfg::kWarpRows + lane / 4;
  const int col0_in_block = warp_n * Cfg::kWarpCols + 2 * (lane % 4);
  const int unmasked_limit = fa::unmasked_key_limit<Is_causal>(m0, {p.seqlen_k, causal_offset});

  for (int j = 0; j < n_blocks; ++j) {
    const int nb = ring.block_of(j);
    ring.wait_k_issue_v(j);

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
    fa::clear_accumulators(s);
    const unsigned k_tile = ring.k_slot(j) + k_frag_row;
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
    if (fa::key_block_needs_mask(nb, kBlockN, unmasked_limit))
      fa::apply_mask<Is_causal>(s, row0, nb * kBlockN + col0_in_block, p.seqlen_k, causal_offset);

    ring.wait_v_issue_k(j);
    softmax.step(s, o, scale_log2);
    // O += P V: P (fp32 C fragments) rounded to Element and repacked as A fragments in registers.
    const unsigned v_tile = ring.v_slot(j) + v_frag_row;
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
    fa::after_key_block(o, softmax.row_sum);
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
    if (!fa::merge_warp_columns<kBlockM, kHeadDim, Cfg::kWarpsN>(
            o, softmax, smem + Cfg::kQBytes, warp_m * Cfg::kWarpRows + lane / 4, warp_n, scale_log2, lane))
      return;
    sums_are_partial = false;
  }

  const int warp_row0 = m0 + warp_m * Cfg::kWarpRows;
  float* lse = p.lse + fa::row_index0(p, tile.batch, tile.head);
  fa::normalise_and_write_lse(o, softmax, sums_are_partial, scale_log2, lse + row0, p.seqlen_q - row0, lane);
  Element* o_base = fa::o_slice<Element>(p, tile.batch, tile.head);
  if constexpr (Cfg::kEpilogueSmem) {
    // The warp's own Q rows are free: only this warp ever read them.
    fa::store_o_through_shared<Element>(o, s_q + warp_m * Cfg::kWarpRows * kRowBytes,
                                        o_base + warp_row0 * p.o_row_stride, p.o_row_stride,
                                        p.seqlen_q - warp_row0, lane);
  } else {
    fa::store_o_from_registers<Element>(o, o_base + row0 * p.o_row_stride + 2 * (lane % 4), p.o_row_stride,
                                        p.seqlen_q - row0);
  }
}

}  // namespace fa2

// The kernel the runtime instantiates by name expression, e.g.
//   fa2_sm80_fwd<__nv_bfloat16, 128, 128, 64, 4, 1, 1, false, true, false>
// (Element, kHeadDim, kBlockM, kBlockN, kNWarps, kStages, kWarpsN, kQInRegs, kEpilogueSmem, Is_causal).
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, int kStages, int kWarpsN,
          bool kQInRegs, bool kEpilogueSmem, bool Is_causal>
__global__ void __launch_bounds__(fa::kWarpSize* kNWarps)
    fa2_sm80_fwd(const __grid_constant__ fa::AttentionParams params) {
  extern __shared__ __align__(128) unsigned char smem[];
  using Cfg = fa2::FwdConfig<kHeadDim, kBlockM, kBlockN, kNWarps, kStages, kWarpsN, kQInRegs, kEpilogueSmem>;
  fa2::forward<Element, Cfg, Is_causal>(params, smem);
}
