#pragma once
// fa3_sm90 forward, a consumer warpgroup's work on one tile: its 64 query rows, S = Q K^T and O += P V on
// wgmma over the tile's key blocks, the online softmax of fa_softmax.cuh between them. The loop over the
// CTA's tiles (O zeroed, Q waited for, the epilogue of fa3_sm90_epilogue.cuh) is fa3_sm90_consumer_tiles.cuh.
//
// Register map: S and O are wgmma m64 accumulators, float[N/8][4] per thread, which is exactly one 16-row
// mma.sync tile (kMT = 1) of the warp's rows 16 warp + lane/4 (+8): fa::OnlineSoftmax<1>, fa::apply_mask
// and fa::normalise_and_write_lse take them as they are. P is repacked from S in registers as the A
// operand of P V (mma.sync's A fragment: the same packing as fa2_sm80).
//
// FP8 (Element = __nv_fp8_e4m3 / e5m2). S = Q K^T on k32 wgmma; descale as fa2_fp8 (fa_params.h): per
// tensor, q_descale k_descale is folded into the exponent's scale; per block, S is multiplied by
// q_descale(row) k_descale(key block) before the mask (descale blocks are whole key blocks: the host
// refuses others). P = exp2(..) <= 1 times p_scale (2^8, folded into the exp2) is rounded to FP8 with
// saturation, l summed in fp32 before the rounding. The A operand of the k32 P V product holds, per thread
// and 32-key step, keys {2c, 2c+1, 8+2c, 9+2c} (+16) of its rows in k slots 4c..4c+3 (+16): exactly the S
// values this thread already owns, so P needs no shuffle; V^T's keys are stored in that permuted order by the
// transpose kernel (fa3_sm90_transpose.cuh). Per-block V factors: O is kept in units of the current block's V
// factor and moved to the next one's with the softmax rescale (one multiply per block).
//
// FP8 with bf16 P V (kPvBf16, Cfg::kVTransposed false; numerics' bf16_pv variant): S = Q K^T as above, then
// P (still times p_scale: exact in bf16, and O's factor stays the same) packed as bf16 like the 16-bit
// family's P and O += P V on bf16 wgmma with V (bf16, not descaled) read N-major from its TMA tile.
#include "fa3_sm90_epilogue.cuh"
#include "fa3_sm90_layout.cuh"
#include "fa_epilogue.cuh"
#include "fa_fp8.cuh"
#include "fa_mask.cuh"
#include "fa_softmax.cuh"
#include "fa_wgmma.cuh"

namespace fa3 {

// The scale scores enter exp2 with: softmax_scale log2(e), times the FP8 per-tensor descales.
template <class Cfg, bool kBlockDescale>
__device__ __forceinline__ float score_scale_log2(const fa::AttentionParams& p) {
  if constexpr (Cfg::kFp8 && !kBlockDescale)
    return fa::scale_log2_of(p) * (p.q_descale * fa::k_descale_factor(p.k_descale));
  return fa::scale_log2_of(p);
}

template <typename Element, class Cfg, bool Is_causal, bool kBlockDescale>
struct Consumer {
  static constexpr int kNT = Cfg::kNT, kDT = Cfg::kDT, kPSteps = Cfg::kPSteps;
  static constexpr int kConsumers = Cfg::kConsumers;
  static constexpr bool kPingPong = Cfg::kPingPong;
  static constexpr bool kFp8 = Cfg::kFp8;
  static_assert(!kBlockDescale || kFp8, "block descale factors are FP8's");
  static constexpr bool kFp8Pv = Cfg::kVTransposed;  // P and V as FP8 codes (V^T)
  // The element type of O += P V: the kernel's, or with bf16 P V the FP8 kernel's 16-bit type (O's, bf16).
  using PvElement = typename OutputType<Element, kFp8 && !kFp8Pv>::type;

  const fa::AttentionParams& p;
  unsigned char* smem;
  typename Cfg::Barriers& bars;
  const int wg;  // consumer index 0..kConsumers-1
  const int tid = threadIdx.x % kWarpgroupThreads, warp = tid / 32, lane = tid % 32;
  const bool signalling = tid == 0;  // the thread that releases slots for the warpgroup
  unsigned char* const q_rows = smem + wg * kRowsPerConsumer * Cfg::QTile::kSpan;  // WG's rows of panel 0
  // Where O is staged for its store: 16-bit, the WG's own Q rows; FP8, its rows of the O tile.
  unsigned char* const o_rows = smem + Cfg::kOOffset + wg * kRowsPerConsumer * Cfg::OTile::kSpan;
  const float scale_log2 = score_scale_log2<Cfg, kBlockDescale>(p);
  float p_scale = 1.f;  // FP8: P is rounded as P p_scale, which the softmax folds into its exp2
  fa::ScaledP scaled_p;
  float v_descale_now = 1.f;             // FP8: the V factor O is in units of (per tensor: p.v_descale)
  float q_descale_rows[2] = {1.f, 1.f};  // FP8 per block: this thread's two rows' Q factors

  float s[1][kNT][4];
  float o[1][kDT][4];
  unsigned pa[kPSteps][4];  // P as the A operand, 32 bytes of keys per step
  float rescale[2];
  fa::OnlineSoftmax<1> softmax;
  // FP8: whether some row of this warp has a rescale factor other than 1 (warp-uniform; see rescale_output).
  bool o_rescale_needed = true;

  // Ping-pong: wait for this warpgroup's turn to issue products, and pass the turn on after issuing.
  __device__ __forceinline__ void take_turn() {
    if constexpr (kPingPong) fa::named_barrier_sync(kTurnBarrier + wg, 2 * kWarpgroupThreads);
  }
  __device__ __forceinline__ void pass_turn() {
    if constexpr (kPingPong)
      fa::named_barrier_arrive(kTurnBarrier + (wg + 1) % kConsumers, 2 * kWarpgroupThreads);
  }

  // FP8: the descriptor of k-step `step` of a K-major tile from the tile's step-0 descriptor `d`. Only the
  // start address field moves, and a shared address (< 2^18) plus the step's offset stays inside its 14 bits,
  // so one 32-bit add on the low word gives k_major_descriptor's value where it recomputed the address field
  // (add, and, shift, widen, or per wgmma): at d128 the 8 products' descriptors took 40 PTX instructions per
  // key block, now 21.
  template <int kSpan>
  __device__ __forceinline__ static unsigned long long next_k_step(unsigned long long d, int panel_bytes,
                                                                   int step) {
    constexpr int kStepsPerPanel = kSpan / 32;
    const int bytes =
        (step / kStepsPerPanel) * panel_bytes + (step % kStepsPerPanel) * 32;  // as k_major_descriptor
    const unsigned lo = unsigned(d) + unsigned(bytes) / 16;
    return (d >> 32) << 32 | lo;
  }

  // S = Q K^T for the K tile in slot `slot`, committed as one group.
  __device__ __forceinline__ void issue_qk(int slot) {
    const unsigned k_tile = fa::smem_addr(smem) + Cfg::kKOffset + slot * Cfg::kKVBytes;
    fa::wgmma_fence();
    const unsigned q_tile = fa::smem_addr(q_rows);
    using Ops = fa::WgmmaOps<Element, Cfg::kBlockN>;
    using Q = typename Cfg::QTile;
    using K = typename Cfg::KTile;
    if constexpr (kFp8) {  // the step-0 descriptors advanced (next_k_step)
      const unsigned long long q0 = fa::k_major_descriptor<Q::kSpan>(q_tile, Q::kPanelBytes, 0);
      const unsigned long long k0 = fa::k_major_descriptor<K::kSpan>(k_tile, K::kPanelBytes, 0);
      Ops::template ss<0>(s[0], q0, k0);
#pragma unroll
      for (int step = 1; step < Cfg::kQKSteps; ++step)
        Ops::template ss<1>(s[0], next_k_step<Q::kSpan>(q0, Q::kPanelBytes, step),
                            next_k_step<K::kSpan>(k0, K::kPanelBytes, step));
    } else {
      Ops::template ss<0>(s[0], fa::k_major_descriptor<Q::kSpan>(q_tile, Q::kPanelBytes, 0),
                          fa::k_major_descriptor<K::kSpan>(k_tile, K::kPanelBytes, 0));
#pragma unroll
      for (int step = 1; step < Cfg::kQKSteps; ++step)
        Ops::template ss<1>(s[0], fa::k_major_descriptor<Q::kSpan>(q_tile, Q::kPanelBytes, step),
                            fa::k_major_descriptor<K::kSpan>(k_tile, K::kPanelBytes, step));
    }
    fa::wgmma_commit();
  }
  // O += P V for the V tile in slot `slot`, committed as one group.
  __device__ __forceinline__ void issue_pv(int slot) {
    const unsigned v_tile = fa::smem_addr(smem) + Cfg::kVOffset + slot * Cfg::kVBytes;
    fa::wgmma_fence();
    using V = typename Cfg::VTile;
    if constexpr (kFp8Pv) {  // V^T: K-major, 32 keys per step; the step-0 descriptor advanced (next_k_step)
      const unsigned long long v0 = fa::k_major_descriptor<V::kSpan>(v_tile, V::kPanelBytes, 0);
#pragma unroll
      for (int step = 0; step < kPSteps; ++step)
        fa::WgmmaOps<Element, Cfg::kHeadDim>::rs(o[0], pa[step],
                                                 next_k_step<V::kSpan>(v0, V::kPanelBytes, step), 1);
    } else {
#pragma unroll
      for (int step = 0; step < kPSteps;
           ++step)  // 16-bit V rows (bf16 with kPvBf16): N-major, 16 keys per step
        fa::WgmmaOps<PvElement, Cfg::kHeadDim>::template rs<1>(
            o[0], pa[step], fa::n_major_descriptor(v_tile, V::kPanelBytes, step), 1);
    }
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
    if constexpr (fa::kNormalizeInLoop) normalize_in_loop(softmax.row_sum);
  }
  // [normalize-in-loop]'s effect: O divided by l after every block (FP8: the emulator's l carries p_scale).
  __device__ __forceinline__ void normalize_in_loop(const float (&sums)[2]) {
    fa::divide_by_row_sums(o, sums, kFp8 ? p_scale : 1.f);
  }

  // Masks (where the block can hold a masked key) and exponentiates S; rescale gets the factor for O.
  __device__ __forceinline__ void softmax_of_block(int block, int row0, int unmasked_limit, int kv_matrix) {
    if constexpr (kBlockDescale) {
      const float kd = fa::k_descale_factor(fa::block_descale(
          p.k_descale_blocks, kv_matrix, block * Cfg::kBlockN, p.seqlen_k, p.descale_block_rows));
      const float row_factor[2] = {q_descale_rows[0] * kd, q_descale_rows[1] * kd};
#pragma unroll
      for (int t = 0; t < kNT; ++t)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[0][t][e] *= row_factor[e / 2];
    }
    if (fa::key_block_needs_mask(block, Cfg::kBlockN, unmasked_limit))
      fa::apply_mask<Is_causal>(s, row0, block * Cfg::kBlockN + 2 * (lane % 4), p.seqlen_k,
                                p.seqlen_k - p.seqlen_q);
    if constexpr (kFp8)
      softmax.template update<kNT, true>(s, scale_log2, rescale, scaled_p);
    else
      softmax.update(s, scale_log2, rescale);
    // O moves to the units of this block's V factor with the rescale (bf16 V has none).
    if constexpr (kBlockDescale && kFp8Pv) {
      const float vd = fa::block_descale(p.v_descale_blocks, kv_matrix, block * Cfg::kBlockN, p.seqlen_k,
                                         p.descale_block_rows);
      const float ratio = v_descale_now / vd;
      rescale[0] *= ratio;
      rescale[1] *= ratio;
      v_descale_now = vd;
    }
    // FP8: one vote per warp and block; rescale_output skips O's multiplies when every factor is exactly 1.
    if constexpr (kFp8) o_rescale_needed = __any_sync(0xffffffffu, rescale[0] != 1.f || rescale[1] != 1.f);
  }
  // O times the factors of the last softmax_of_block. FP8: skipped when no row of the warp changed its factor
  // from 1 (no row raised its max, and per block, the V factor stayed): x * 1 = x exactly, so the skip gives
  // the same bits and saves one FMUL per O element (d128, kBlockN 128: one per score) on those blocks.
  // With iid scores a warp keeps all 16 row maxima at its j-th block with probability (1 - 1/j)^16: 52% of
  // the blocks at n8192 (64 blocks of 128 keys), 68% at n16384.
  __device__ __forceinline__ void rescale_output() {
    if constexpr (kFp8)
      if (!o_rescale_needed) return;
    fa::OnlineSoftmax<1>::rescale_o(o, rescale);
  }
  __device__ __forceinline__ void pack_p() {
    if constexpr (kFp8Pv) {
#pragma unroll
      for (int kk = 0; kk < kPSteps; ++kk) {
        const float(&t0)[4] = s[0][4 * kk];
        const float(&t1)[4] = s[0][4 * kk + 1];
        const float(&t2)[4] = s[0][4 * kk + 2];
        const float(&t3)[4] = s[0][4 * kk + 3];
        // s already holds P p_scale (the softmax's ScaledP).
        pa[kk][0] = fa::pack_fp8x4<Element>(t0[0], t0[1], t1[0], t1[1]);
        pa[kk][1] = fa::pack_fp8x4<Element>(t0[2], t0[3], t1[2], t1[3]);
        pa[kk][2] = fa::pack_fp8x4<Element>(t2[0], t2[1], t3[0], t3[1]);
        pa[kk][3] = fa::pack_fp8x4<Element>(t2[2], t2[3], t3[2], t3[3]);
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < kPSteps; ++kk) {
        pa[kk][0] = fa::ElementTraits<PvElement>::pack(s[0][2 * kk][0], s[0][2 * kk][1]);
        pa[kk][1] = fa::ElementTraits<PvElement>::pack(s[0][2 * kk][2], s[0][2 * kk][3]);
        pa[kk][2] = fa::ElementTraits<PvElement>::pack(s[0][2 * kk + 1][0], s[0][2 * kk + 1][1]);
        pa[kk][3] = fa::ElementTraits<PvElement>::pack(s[0][2 * kk + 1][2], s[0][2 * kk + 1][3]);
      }
    }
  }

  // The key blocks of one tile; `count` is the CTA's running key-block number (the load ring's).
  __device__ __forceinline__ void mainloop(const TileWork<Cfg, Is_causal>& w, int& count) {
    const int row0 = w.m0 + wg * kRowsPerConsumer + 16 * warp + lane / 4;
    const int unmasked =
        fa::unmasked_key_limit<Is_causal>(w.m0 + wg * kRowsPerConsumer, p.seqlen_q, p.seqlen_k);
    const int kv_matrix = w.tile.batch * p.heads_kv + w.kv_head;
    if constexpr (kBlockDescale) {
      const int q_matrix = w.tile.batch * p.heads_q + w.tile.head;
      for (int h = 0; h < 2; ++h)
        q_descale_rows[h] =
            fa::block_descale(p.q_descale_blocks, q_matrix, row0 + 8 * h, p.seqlen_q, p.descale_block_rows);
      v_descale_now = 1.f;  // O is zero until the first block's product: any finite start is exact
    }
    if constexpr (Cfg::kIntraWgOverlap) {
      // Block 0 (the last key block) alone, then per block j: S_j and P_{j-1} V_{j-1} in flight together.
      qk_alone(count);
      softmax_of_block(w.n_blocks - 1, row0, unmasked, kv_matrix);
      pack_p();
      for (int j = 1; j < w.n_blocks; ++j, ++count) {
        // Both waits before the first issue: no barrier wait (a loop with a timer) sits inside the products.
        bars.k.wait_full(count + 1, "k_full");
        bars.v.wait_full(count, "v_full");
        take_turn();
        issue_qk(bars.k.slot(count + 1));
        rescale_output();  // P_{j-1} V_{j-1} is added at the max of block j-1
        issue_pv(bars.v.slot(count));
        pass_turn();
        float sums_before[2] = {softmax.row_sum[0], softmax.row_sum[1]};
        wait_products<1>();  // S_j
        bars.k.release(count + 1, signalling);
        softmax_of_block(w.n_blocks - 1 - j, row0, unmasked, kv_matrix);
        wait_products<0>();  // P_{j-1} V_{j-1}
        bars.v.release(count, signalling);
        if constexpr (fa::kNormalizeInLoop) normalize_in_loop(sums_before);
        pack_p();
      }
      rescale_output();
      pv_alone(count);
      ++count;
    } else {
      for (int j = 0; j < w.n_blocks; ++j, ++count) {
        qk_alone(count);
        softmax_of_block(w.n_blocks - 1 - j, row0, unmasked, kv_matrix);
        rescale_output();
        pack_p();
        pv_alone(count);
      }
    }
  }
};

}  // namespace fa3
