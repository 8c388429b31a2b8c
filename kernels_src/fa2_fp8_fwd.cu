// fa2_fp8 forward: FlashAttention-2 with FP8 (e4m3 or e5m2) Q, K, V on mma.sync m16n8k32 (sm_89 and
// later), fp32 accumulation, bf16 O and fp32 LSE in fa2_sm80's layout.
//
// Composed of fa2_sm80_fwd.cu's parts (one CTA per (query block, head, batch) of fa_tile_coords.cuh, the
// key blocks of fa_block_range.cuh walked last to first through fa_kv_ring.cuh's cp.async ring of byte
// tiles, online softmax in registers with fa_softmax.cuh, masks of fa_mask.cuh, LSE and O store of
// fa_epilogue.cuh), with the rows split among the warps (FlashAttention-2's layout only). What FP8 changes:
//
// - Tiles are byte rows (kHeadDim bytes). One m16n8k32 k-step covers 32 bytes, as one m16n8k16 step of
//   16-bit elements does, so Q (A) and K (B) fragments come from the same ldmatrix.b16 loads as in
//   fa2_sm80 (a b16 "element" is two FP8 codes, and the k32 fragment is the k16 one with bytes for halves).
// - Descale (numerics/fp8_quantization.hpp): S = (Q K^T) q_descale k_descale, O = (P V) v_descale / p_scale.
//   Per tensor (kBlockDescale = false): q_descale k_descale is folded into the softmax's scale*log2(e), so
//   the loop is fa2_sm80's. Per block (one factor per descale_block_rows rows of each (batch, head)):
//   scores are multiplied by q_descale(row) k_descale(col) before the mask (two FMULs per score), and
//   since the V factor changes along the keys inside P.V, O is accumulated in units of the current V
//   factor and rescaled by old/new when a 32-key k-step enters a new V block (warp-uniform, rare).
// - P = exp2(...) from the softmax step, times p_scale (2^8, numerics' probability_scale: the largest
//   weight is 256 <= 448, small weights clear e4m3's subnormals), rounded to FP8 with saturation (cvt
//   .satfinite, as the CPU emulator's __nv_cvt_float_to_fp8(__NV_SATFINITE)). l is summed before the
//   rounding and without p_scale, so O = acc v_descale / (l p_scale) and the LSE is fa_epilogue's.
// - P.V needs V as the B operand with 4 consecutive keys per register for one d column: V^T. ldmatrix
//   .trans moves 16-bit units, so it cannot transpose bytes. We let it transpose byte pairs and finish
//   in registers: ldmatrix.x4.trans over keys {0-7, 8-15, 16-23, 24-31} x 16 d columns gives lane (g, c)
//   V[key 8i+2c..8i+2c+1][d 2g..2g+1] per matrix i; two byte permutes (prmt) per B register turn that into
//   keys {2c, 2c+1, 8+2c, 9+2c} (and +16) of column 2g or 2g+1. The k order inside the MMA is permuted the
//   same way on both operands: the A register of k slots 4c..4c+3 holds P of keys 2c, 2c+1, 8+2c, 9+2c,
//   exactly the C-fragment values this lane already owns, so P needs no shuffles either. The even/odd
//   column split makes each lane own O columns 16dp + 4c..4c+3, stored as 8-byte bf16 runs (a quad writes
//   32 contiguous bytes of a row: whole sectors). Cost of the transpose: 4 PRMT per ldmatrix.x4.trans
//   and per warp, i.e. per 32 keys x 16 columns, 128 PRMT per warp for a 128-key x d128 tile against
//   256 m16n8k32 MMAs (kMT = 2) of that tile; no extra shared memory, barrier or launch. FlashAttention-3
//   transposes V in shared memory once per CTA instead (cheaper per warp, but a barrier and a buffer).
//
// Speed on Hopper (the 1.3x target of issue 5): mma.sync with .e4m3/.e5m2 is an sm_89 (Ada) instruction.
// Hopper's tensor cores run FP8 at 2x bf16 only through wgmma (QGMMA in SASS; 8192 against 4096 dense
// FLOP/clk/SM, 1979 against 989 TFLOP/s on the H100/H200 datasheet). On sm_90 ptxas lowers mma.sync FP8
// to conversions to f16 plus HMMA (NVIDIA's CUTLASS maintainers, cutlass issue 1986: "not natively
// supported on Hopper ... software emulation to convert the data and use fp16 tensor core"). So this
// kernel's matrix rate is bounded by fa2_sm80's own mma.sync f16 rate (our bf16 forward: 320 TFLOP/s at
// d128 n4096, i.e. ~32% of the 989 peak) minus the conversion instructions: 1.3x (~416 TFLOP/s) is not
// reachable on the H200 with mma.sync; what FP8 saves here is half the K/V bytes from device memory and
// shared memory (K/V tiles of kHeadDim bytes per row). It would need wgmma (an fa3_sm90 family). On sm_89
// the FP8 mma.sync is native and 2x the f16 rate. scripts/device-fp8.sh measures the ratio and counts the
// SASS instructions (HMMA / QMMA / F2FP) of the kernel to confirm the lowering.
#include "fa_arch.h"
#include "fa_block_range.cuh"
#include "fa_epilogue.cuh"
#include "fa_fp8.cuh"
#include "fa_kv_ring.cuh"
#include "fa_mask.cuh"
#include "fa_softmax.cuh"
#include "fa_tile_coords.cuh"

namespace fa2_fp8 {

// The tunables and the constraints between them. device/families/fa2_fp8.cpp mirrors every rule below.
template <int kHeadDim_, int kBlockM_, int kBlockN_, int kNWarps_, int kStages_, bool kQInRegs_>
struct FwdConfig {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kNWarps = kNWarps_;
  static constexpr int kStages = kStages_;
  static constexpr bool kQInRegs = kQInRegs_;

  static constexpr int kThreads = fa::kWarpSize * kNWarps;
  static constexpr int kWarpRows = kBlockM / kNWarps;
  static constexpr int kMT = kWarpRows / 16;     // 16-row MMA tiles per warp
  static constexpr int kNT = kBlockN / 8;        // 8-key score tiles
  static constexpr int kDT = kHeadDim / 8;       // 8-column output tiles
  static constexpr int kKSteps = kHeadDim / 32;  // m16n8k32 steps of Q K^T
  static constexpr int kRowBytes = kHeadDim;     // one byte per FP8 element
  static constexpr int kChunks = kRowBytes / 16;
  static constexpr int kQBytes = kBlockM * kRowBytes;
  static constexpr int kKVTileBytes = kBlockN * kRowBytes;
  static constexpr int kSmemBytes = kQBytes + 2 * kStages * kKVTileBytes;
  // fp32 registers per thread for O, S and (kQInRegs) the Q fragments: above 192 the 255-register cap
  // leaves too little for fragments and addresses (fa2_sm80's measured limit; FP8 fragments are half as
  // many registers per value, the fp32 accumulators are the same).
  static constexpr int kAccumulatorRegisters = 4 * kMT * (kDT + kNT) + (kQInRegs ? 4 * kMT * kKSteps : 0);

  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256, "head dim 64, 128 or 256");
  static_assert(kNWarps == 1 || kNWarps == 2 || kNWarps == 4 || kNWarps == 8, "1, 2, 4 or 8 warps");
  static_assert(kBlockM % (16 * kNWarps) == 0, "each warp owns whole 16-row MMA tiles");
  static_assert(kBlockN % 32 == 0, "whole 32-key P.V k-steps");
  static_assert(kMT >= 1 && kMT <= 4, "at most 4 row tiles per warp (registers)");
  static_assert(kStages >= 1 && kStages <= 4, "1 to 4 K/V buffers");
  static_assert((kBlockN * kChunks) % kThreads == 0 && (kBlockM * kChunks) % kThreads == 0,
                "tile copies split evenly over the threads");
  static_assert(kAccumulatorRegisters <= 192, "accumulators within 192 registers per thread");
  static_assert(kSmemBytes <= fa::kMaxSharedBytesPerBlock, "within the opt-in shared memory per block");
};

template <typename Element, typename Cfg, bool kBlockDescale, bool Is_causal>
__device__ __forceinline__ void forward(const fa::AttentionParams& p, unsigned char* smem) {
  constexpr int kMT = Cfg::kMT, kNT = Cfg::kNT, kStages = Cfg::kStages;
  constexpr int kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN, kHeadDim = Cfg::kHeadDim;
  constexpr int kRowBytes = Cfg::kRowBytes, kChunks = Cfg::kChunks, kKSteps = Cfg::kKSteps;
  using Traits = fa::Fp8Traits<Element>;
  using Byte = unsigned char;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const fa::QueryTile tile = fa::query_tile<kBlockM>(p);
  const int m0 = tile.m0;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const float p_scale = fa::p_scale_of<Element>(p);

  // Per tensor: q_descale * k_descale folded into the exponent's scale (scores stay raw Q_codes . K_codes;
  // the running max and the LSE then use the folded scale, which is the same arithmetic).
  const float scale_log2 = kBlockDescale
                               ? fa::scale_log2_of(p)
                               : fa::scale_log2_of(p) * (p.q_descale * fa::k_descale_factor(p.k_descale));
  const int n_blocks = fa::key_block_count<Is_causal, kBlockM, kBlockN>(m0, {p.seqlen_k, causal_offset});
  const Byte* q = fa::q_slice<Byte>(p, tile.batch, tile.head) + m0 * p.q_row_stride;
  const Byte* k = fa::k_slice<Byte>(p, tile.batch, tile.kv_head);
  const Byte* v = fa::v_slice<Byte>(p, tile.batch, tile.kv_head);
  const unsigned s_q = fa::smem_addr(smem);
  const unsigned s_k = s_q + Cfg::kQBytes;
  fa::load_fp8_tile_async<kBlockM, kRowBytes, Cfg::kThreads>(s_q, q, p.q_row_stride, p.seqlen_q - m0, tid);
  const fa::KvRingLastToFirst<Byte, kBlockN, kRowBytes, Cfg::kThreads, kStages> ring{
      p, k, v, s_k, s_k + kStages * Cfg::kKVTileBytes, n_blocks, tid};
  ring.prologue();  // the Q copies join K_0's group

  // ldmatrix addressing (fa2_sm80's): every fragment row base is a multiple of 8, so a lane's row is
  // lane % 8 modulo 8. A (Q): row (l%8) + 8((l/8)%2), chunk 2kk + l/16. B (K): row (l%8) + 8(l/16),
  // chunk 2kk + (l/8)%2. Trans (V): row l of the 32-key k-step, chunk dp.
  const int row_mod8 = lane % 8;
  const int row_a = row_mod8 + 8 * ((lane / 8) % 2);
  const int row_b = row_mod8 + 8 * (lane / 16);
  const unsigned q_frag_base = s_q + (warp * Cfg::kWarpRows + row_a) * kRowBytes;
  const int k_frag_row = row_b * kRowBytes;
  const int v_frag_row = lane * kRowBytes;

  unsigned q_regs[Cfg::kQInRegs ? kMT : 1][Cfg::kQInRegs ? kKSteps : 1][4];

  float o[kMT][Cfg::kDT][4];
  fa::clear_accumulators(o);
  fa::OnlineSoftmax<kMT> softmax;
  softmax.init();

  const int row0 = m0 + warp * Cfg::kWarpRows + lane / 4;  // this thread's first query row
  const int col0_in_block = 2 * (lane % 4);
  const int unmasked_limit = fa::unmasked_key_limit<Is_causal>(m0, {p.seqlen_k, causal_offset});

  // Per-block descale: the Q factor of each of this thread's rows; the V factor O is currently in.
  float q_descale_rows[2 * kMT];
  float v_descale_now = p.v_descale;
  if constexpr (kBlockDescale) {
#pragma unroll
    for (int r = 0; r < 2 * kMT; ++r)
      q_descale_rows[r] =
          fa::block_descale(p.q_descale_blocks, tile.batch * p.heads_q + tile.head,
                            row0 + 16 * (r / 2) + 8 * (r % 2), p.seqlen_q, p.descale_block_rows);
    v_descale_now = 0.f;  // set by the first k-step (O is still zero)
  }
  const int kv_matrix = tile.batch * p.heads_kv + tile.kv_head;

  for (int j = 0; j < n_blocks; ++j) {
    const int nb = ring.block_of(j);
    ring.wait_k_issue_v(j);

    if (Cfg::kQInRegs && j == 0) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int kk = 0; kk < kKSteps; ++kk)
          fa::ldmatrix_x4(q_regs[Cfg::kQInRegs ? mt : 0][Cfg::kQInRegs ? kk : 0],
                          q_frag_base + mt * 16 * kRowBytes +
                              fa::fp8_chunk_offset<kChunks>(row_mod8, 2 * kk + lane / 16));
    }

    // S = Q_codes K_codes^T: m16n8k32, 32 head-dim bytes per k-step.
    float s[kMT][kNT][4];
    fa::clear_accumulators(s);
    const unsigned k_tile = ring.k_slot(j) + k_frag_row;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      unsigned a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        if constexpr (Cfg::kQInRegs) {
#pragma unroll
          for (int e = 0; e < 4; ++e) a[mt][e] = q_regs[mt][kk][e];
        } else {
          fa::ldmatrix_x4(a[mt], q_frag_base + mt * 16 * kRowBytes +
                                     fa::fp8_chunk_offset<kChunks>(row_mod8, 2 * kk + lane / 16));
        }
      }
      const int k_chunk_off = fa::fp8_chunk_offset<kChunks>(row_mod8, 2 * kk + (lane / 8) % 2);
#pragma unroll
      for (int np = 0; np < kNT / 2; ++np) {
        unsigned b[4];
        fa::ldmatrix_x4(b, k_tile + np * 16 * kRowBytes + k_chunk_off);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          Traits::mma(s[mt][2 * np], a[mt], b[0], b[1]);
          Traits::mma(s[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }
    if constexpr (kBlockDescale) fa::descale_scores_by_block(s, q_descale_rows, p, kv_matrix, nb * kBlockN);
    if (fa::key_block_needs_mask(nb, kBlockN, unmasked_limit))
      fa::apply_mask<Is_causal>(s, row0, nb * kBlockN + col0_in_block, p.seqlen_k, causal_offset);

    ring.wait_v_issue_k(j);
    softmax.step(s, o, scale_log2);

    // O += P V. P (the C fragments, <= 1) times p_scale, rounded to FP8 and packed as A fragments in the
    // permuted k order (see the header): a0 = row g, keys 2c, 2c+1, 8+2c, 9+2c of the k-step.
    const unsigned v_tile = ring.v_slot(j) + v_frag_row;
#pragma unroll
    for (int kk = 0; kk < kBlockN / 32; ++kk) {
      if constexpr (kBlockDescale)
        fa::enter_v_descale_block(o, v_descale_now, p, kv_matrix, nb * kBlockN + 32 * kk);
      unsigned a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        const float(&t0)[4] = s[mt][4 * kk];
        const float(&t1)[4] = s[mt][4 * kk + 1];
        const float(&t2)[4] = s[mt][4 * kk + 2];
        const float(&t3)[4] = s[mt][4 * kk + 3];
        a[mt][0] =
            fa::pack_fp8x4<Element>(t0[0] * p_scale, t0[1] * p_scale, t1[0] * p_scale, t1[1] * p_scale);
        a[mt][1] =
            fa::pack_fp8x4<Element>(t0[2] * p_scale, t0[3] * p_scale, t1[2] * p_scale, t1[3] * p_scale);
        a[mt][2] =
            fa::pack_fp8x4<Element>(t2[0] * p_scale, t2[1] * p_scale, t3[0] * p_scale, t3[1] * p_scale);
        a[mt][3] =
            fa::pack_fp8x4<Element>(t2[2] * p_scale, t2[3] * p_scale, t3[2] * p_scale, t3[3] * p_scale);
      }
#pragma unroll
      for (int dp = 0; dp < kHeadDim / 16; ++dp) {
        unsigned r[4];
        fa::ldmatrix_x4_trans(r, v_tile + kk * 32 * kRowBytes + fa::fp8_chunk_offset<kChunks>(row_mod8, dp));
        const unsigned b_even0 = fa::byte_perm(r[0], r[1], fa::kPermEvenColumns);
        const unsigned b_even1 = fa::byte_perm(r[2], r[3], fa::kPermEvenColumns);
        const unsigned b_odd0 = fa::byte_perm(r[0], r[1], fa::kPermOddColumns);
        const unsigned b_odd1 = fa::byte_perm(r[2], r[3], fa::kPermOddColumns);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          Traits::mma(o[mt][2 * dp], a[mt], b_even0, b_even1);    // columns 16 dp + 2n
          Traits::mma(o[mt][2 * dp + 1], a[mt], b_odd0, b_odd1);  // columns 16 dp + 2n + 1
        }
      }
    }
    fa::after_key_block(o, softmax.row_sum, p_scale);  // the emulator's l carries p_scale, ours does not
  }
  fa::cp_async_wait<0>();

  // O = acc * v_descale / p_scale, then / l (fa_epilogue.cuh).
  const float out_factor = fa::fp8_output_factor(v_descale_now, p_scale);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < Cfg::kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[mt][dt][e] *= out_factor;

  float* lse = p.lse + fa::row_index0(p, tile.batch, tile.head);
  fa::normalise_and_write_lse(o, softmax, true, scale_log2, lse + row0, p.seqlen_q - row0, lane);
  fa::store_o_column_quads(
      o, fa::o_slice<__nv_bfloat16>(p, tile.batch, tile.head) + row0 * p.o_row_stride + 4 * (lane % 4), p,
      p.seqlen_q - row0);
}

}  // namespace fa2_fp8

// The kernel the runtime instantiates by name expression, e.g.
//   fa2_fp8_fwd<__nv_fp8_e4m3, 128, 128, 64, 4, 1, false, false, false>
// (Element, kHeadDim, kBlockM, kBlockN, kNWarps, kStages, kQInRegs, kBlockDescale, Is_causal).
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, int kStages, bool kQInRegs,
          bool kBlockDescale, bool Is_causal>
__global__ void __launch_bounds__(fa::kWarpSize* kNWarps)
    fa2_fp8_fwd(const __grid_constant__ fa::AttentionParams params) {
  extern __shared__ __align__(128) unsigned char smem[];
  using Cfg = fa2_fp8::FwdConfig<kHeadDim, kBlockM, kBlockN, kNWarps, kStages, kQInRegs>;
  fa2_fp8::forward<Element, Cfg, kBlockDescale, Is_causal>(params, smem);
}
