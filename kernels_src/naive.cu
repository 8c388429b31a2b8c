// naive: standard attention as the textbook writes it, in three launches that go through device memory:
//   step 0: S = Q K^T * scale  -> scratch_s (B, H_q, N_q, ld) in the input type or fp32 (kScoreBits)
//   step 1: P = softmax(S)     -> scratch_p (B, H_q, N_q, ld) in the input type, and the LSE
//   step 2: O = P V            -> o (B, H_q, N_q, D)
// ld = n_k rounded up to 128 (naive_config.h: the padding holds S = -inf, P = 0).
// The baseline for speed, memory and traffic against the fused families. What keeps it "standard
// attention" is that S and P make the round trip through device memory; the arithmetic is made fast (as
// cuBLAS would run it) so that the comparison measures that traffic, not our GEMMs: 128 x 128 CTA tiles on
// mma.sync m16n8k16 with fp32 accumulators, operands through a cp.async ring of 16-byte copies into
// XOR-swizzled tiles read by ldmatrix (ldmatrix.trans for V), and a softmax of 16-byte vectors. (The
// previous version, elementwise staging in 16-key chunks on 32/64 tiles, measured 11-25 TFLOP/s at d 128
// on the H200, 2026-12-02; fa2_sm80 ~300.)
//
// Traffic per (batch, head) at kScoreBits = 16: S written and read, P written and read, 2 bytes each:
// 8 n_q n_k bytes for 4 n_q n_k d FLOPs, i.e. d / 2 FLOP per byte (64 at d 128): at the H200's measured
// copy rate, 4.23 TB/s, that alone bounds the forward at ~270 TFLOP/s, and the two GEMMs and the softmax do
// not overlap each other, so expect well under it. kScoreBits = 32 (fp32 S, the default: see naive.cpp) adds
// 4 n_q n_k bytes (12 in all).
//
// Causal: S is written in full, as PyTorch's math path writes it (masked entries -inf), so the bytes of S,
// of the softmax and of P are those of standard attention; the S tiles entirely above the diagonal skip
// their GEMM and are stored as -inf (computing scores that the mask then overwrites would add arithmetic
// standard attention need not do, not traffic). P V skips the 64-key slabs past a query tile's last
// visible key: their P is exactly 0 (exp(-inf)), so their product adds nothing; that saves reading about
// half of P (7 n_q n_k bytes instead of 8 at 16-bit S).
#include "fa_arch.h"
#include "fa_block_range.cuh"
#include "fa_copy.cuh"
#include "fa_epilogue.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_tile_coords.cuh"
#include "fa_types.cuh"
#include "fa_warp_mma.cuh"
#include "naive_config.h"

namespace naive {

// The element type of S in device memory: the input type (16 bits) or fp32.
template <typename Element, int kScoreBits>
struct ScoreType {
  using type = float;
};
template <typename Element>
struct ScoreType<Element, 16> {
  using type = Element;
};

// Scaled scores of a warp's C fragments to S. row0: this thread's first row (…+ g) at column 2c; rows at or
// past rows_valid are skipped (columns need no bound: rows of S are padded to whole tiles).
template <typename Score, int kMT, int kNT>
__device__ __forceinline__ void store_scores(float (&s)[kMT][kNT][4], float scale, Score* row0, int ld,
                                             int rows_valid) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[mt][nt][e] *= scale;       // -inf stays -inf (scale > 0)
  fa::store_o_from_registers<Score>(s, row0, ld, rows_valid);  // 16-bit pairs rounded to nearest, or fp32
}

// One CTA's sum or max over its threads (kThreads / 32 warps), through `partial`; every thread gets it.
template <int kThreads, bool kIsMax>
__device__ __forceinline__ float block_reduce(float x, float* partial) {
  for (int o = 16; o > 0; o /= 2) {
    const float y = __shfl_xor_sync(0xffffffffu, x, o);
    x = kIsMax ? fmaxf(x, y) : x + y;
  }
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = x;
  __syncthreads();
  x = partial[0];
  for (int w = 1; w < kThreads / 32; ++w) x = kIsMax ? fmaxf(x, partial[w]) : x + partial[w];
  __syncthreads();
  return x;
}

// A 16-byte vector of S as floats.
template <typename Score>
__device__ __forceinline__ void unpack(const uint4& v, float (&x)[16 / sizeof(Score)]) {
  const Score* e = reinterpret_cast<const Score*>(&v);
#pragma unroll
  for (int i = 0; i < 16 / int(sizeof(Score)); ++i) x[i] = static_cast<float>(e[i]);
}

// The softmax's sum pass (kWrite = false: returns this thread's sum of weights) or its write pass (P =
// weight * inv rounded to Element, kVec values per 16-byte vector of S), on the row cache or on S itself.
template <typename Element, typename Score, int kThreads, bool kExact, bool kWrite>
__device__ __forceinline__ float weigh_row(const uint4* s, int n_vec, float m_log2, float inv, Element* out) {
  constexpr int kVec = 16 / int(sizeof(Score));
  float sum = 0.f;
#pragma unroll 2
  for (int i = threadIdx.x; i < n_vec; i += kThreads) {
    float x[kVec];
    unpack<Score>(s[i], x);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      // Scores are already scaled; exp(x) = 2^(x log2 e), by the flash kernels' choice of path per row.
      x[e] = fa::exp2_shifted<kExact>(x[e], fa::kLog2e, m_log2);
      sum += x[e];
    }
    if constexpr (kWrite) {
      unsigned packed[kVec / 2];
#pragma unroll
      for (int e = 0; e < kVec / 2; ++e)
        packed[e] = fa::ElementTraits<Element>::pack(x[2 * e] * inv, x[2 * e + 1] * inv);
      if constexpr (kVec == 8) {
        *reinterpret_cast<uint4*>(out + i * kVec) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
      } else {
        *reinterpret_cast<uint2*>(out + i * kVec) = make_uint2(packed[0], packed[1]);
      }
    }
  }
  return sum;
}

}  // namespace naive

// Step 0: grid (ceil(N_q / 128), H_q, B). The CTA's Q tile stays in shared memory while the K tiles of its
// row stream through a kStages ring; each S tile is stored from the accumulators while the next K loads.
//
// __launch_bounds__(threads, 1): without the minimum of one CTA per SM, ptxas (CUDA 13.0) held the 8-warp
// kernel at 128 registers (two CTAs' worth) and spilled 4-12 bytes; with it, 163-166 registers, no spills.
template <typename Element, int kHeadDim, int kNWarps, int kStages, int kScoreBits, bool Is_causal>
__global__ void __launch_bounds__(kNWarps* fa::kWarpSize, 1)
    naive_scores(const __grid_constant__ fa::AttentionParams p) {
  constexpr naive::Tunables kT{kHeadDim, kNWarps, kStages, kScoreBits};
  static_assert(naive::violation(kT) == nullptr, "a config naive_config.h rejects");
  using Score = typename naive::ScoreType<Element, kScoreBits>::type;
  constexpr int kThreads = kNWarps * fa::kWarpSize, kRowBytes = kHeadDim * 2;
  constexpr int kTileBytes = naive::kBlockM * kRowBytes;  // Q and K tiles alike (kScoreCols rows)
  static_assert(naive::kScoreCols == naive::kBlockM, "one tile size for Q and K");
  constexpr int kWarpRows = naive::kBlockM / naive::score_warps_m(kT);
  constexpr int kWarpCols = naive::kScoreCols / naive::score_warps_n(kT);
  constexpr int kMT = kWarpRows / 16, kNT = kWarpCols / 8;
  extern __shared__ __align__(128) unsigned char smem[];

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / naive::score_warps_n(kT), warp_n = warp % naive::score_warps_n(kT);
  const fa::QueryTile tile = fa::query_tile<naive::kBlockM>(p);
  const int m0 = tile.m0, causal_offset = p.seqlen_k - p.seqlen_q;
  const int ld = naive::scratch_row_stride(p.seqlen_k);
  const int n_tiles = ld / naive::kScoreCols;
  const int n_blocks =
      fa::key_block_count<Is_causal, naive::kBlockM, naive::kScoreCols>(m0, {p.seqlen_k, causal_offset});
  const Element* q = fa::q_slice<Element>(p, tile.batch, tile.head) + m0 * p.q_row_stride;
  const Element* k = fa::k_slice<Element>(p, tile.batch, tile.kv_head);
  const unsigned s_q = fa::smem_addr(smem), s_k = s_q + kTileBytes;
  auto load_k = [&](int j) {
    fa::load_tile_async<naive::kScoreCols, kHeadDim, kThreads>(
        s_k + (j % kStages) * kTileBytes, k + j * naive::kScoreCols * p.k_row_stride, p.k_row_stride,
        p.seqlen_k - j * naive::kScoreCols, tid);
  };
  // Groups {Q, K_0}, K_1, ..., K_{kStages-2}; a CTA above the diagonal (n_blocks = 0) loads nothing.
  if (n_blocks > 0)
    fa::load_tile_async<naive::kBlockM, kHeadDim, kThreads>(s_q, q, p.q_row_stride, p.seqlen_q - m0, tid);
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_blocks) load_k(s);
    fa::cp_async_commit();
  }

  const fa::LaneOffsets lo(lane);
  const unsigned q_rows = s_q + (warp_m * kWarpRows + lo.row_a) * kRowBytes;
  const int k_rows = (warp_n * kWarpCols + lo.row_b) * kRowBytes;
  const int row0 = m0 + warp_m * kWarpRows + lane / 4;   // this thread's first row…
  const int col0 = warp_n * kWarpCols + 2 * (lane % 4);  // …and column within a tile
  Score* s_out =
      reinterpret_cast<Score*>(p.scratch_s) + (fa::row_index0(p, tile.batch, tile.head) + row0) * ld + col0;
  const int unmasked_limit = fa::unmasked_key_limit<Is_causal>(m0, {p.seqlen_k, causal_offset});
  const float scale = fa::scale_log2_of(p) * fa::kLn2;  // softmax_scale, through the shared switch

  for (int j = 0; j < n_blocks; ++j) {
    fa::cp_async_wait<kStages - 2>();  // K_j (and Q) landed: this thread's copies, then everyone's;
    __syncthreads();                   // the slot of K_{j-1} is free for K_{j+kStages-1}
    if (j + kStages - 1 < n_blocks) load_k(j + kStages - 1);
    fa::cp_async_commit();
    float s[kMT][kNT][4];
    fa::clear_accumulators(s);
    fa::warp_qk<Element, kMT, kNT, kHeadDim>(s, q_rows, s_k + (j % kStages) * kTileBytes + k_rows, lo);
    if (fa::key_block_needs_mask(j, naive::kScoreCols, unmasked_limit))
      fa::apply_mask<Is_causal>(s, row0, j * naive::kScoreCols + col0, p.seqlen_k, causal_offset);
    naive::store_scores(s, scale, s_out + j * naive::kScoreCols, ld, p.seqlen_q - row0);
  }
  // Causal: the tiles no row of this CTA sees, -inf without a GEMM.
  for (int j = n_blocks; j < n_tiles; ++j) {
    float s[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = fa::neg_inf();
    naive::store_scores(s, 1.f, s_out + j * naive::kScoreCols, ld, p.seqlen_q - row0);
  }
  fa::cp_async_wait<0>();  // no copy may outlive the CTA (the ring's trailing empty groups)
}

// Step 1: one CTA of kThreads per row (grid B * H_q * N_q): m = max, P = exp(S - m) / sum rounded to the
// input type (what the fused kernels feed P V), LSE = m + log(sum). 16-byte loads of S; the row is kept in
// shared memory when it fits (naive::softmax_shared_bytes), so S is read from device memory once.
template <typename Element, int kThreads, int kScoreBits>
__global__ void __launch_bounds__(kThreads) naive_softmax(const __grid_constant__ fa::AttentionParams p) {
  using Score = typename naive::ScoreType<Element, kScoreBits>::type;
  constexpr int kVec = 16 / int(sizeof(Score));
  static_assert(kThreads % fa::kWarpSize == 0 && kThreads <= 1024, "whole warps");
  static_assert(naive::kKeyAlign % kVec == 0, "rows are whole 16-byte vectors");
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ float partial[kThreads / 32];
  const long long row = blockIdx.x;  // over B * H_q * N_q
  const int ld = naive::scratch_row_stride(p.seqlen_k), n_vec = ld / kVec;
  const bool cached = naive::softmax_shared_bytes(p.seqlen_k, kScoreBits) > 0;
  const uint4* s = reinterpret_cast<const uint4*>(reinterpret_cast<const Score*>(p.scratch_s) + row * ld);
  uint4* cache = reinterpret_cast<uint4*>(smem);
  Element* out = reinterpret_cast<Element*>(p.scratch_p) + row * ld;

  float m = fa::neg_inf();
#pragma unroll 4
  for (int i = threadIdx.x; i < n_vec; i += kThreads) {
    const uint4 v = s[i];
    if (cached) cache[i] = v;
    float x[kVec];
    naive::unpack<Score>(v, x);
#pragma unroll
    for (int e = 0; e < kVec; ++e) m = fmaxf(m, x[e]);
  }
  m = naive::block_reduce<kThreads, true>(m, partial);  // its barrier also completes the cache
  const uint4* src = cached ? cache : s;
  // The guard turns a fully masked row's max to 0; the same per-row choice of exponent path as the flash
  // kernels (fa_softmax.cuh): exact for huge rows.
  const float m_log2 = fa::guarded_max_log2(m, fa::kLog2e);
  const bool exact = fa::needs_exact_exponent(m_log2);
  float sum = exact ? naive::weigh_row<Element, Score, kThreads, true, false>(src, n_vec, m_log2, 0.f, out)
                    : naive::weigh_row<Element, Score, kThreads, false, false>(src, n_vec, m_log2, 0.f, out);
  sum = naive::block_reduce<kThreads, false>(sum, partial);
  const float inv = sum == 0.f ? 0.f : 1.f / sum;
  if (exact)
    naive::weigh_row<Element, Score, kThreads, true, true>(src, n_vec, m_log2, inv, out);
  else
    naive::weigh_row<Element, Score, kThreads, false, true>(src, n_vec, m_log2, inv, out);
  if (threadIdx.x == 0) p.lse[row] = fa::row_lse(m, sum, fa::kLog2e);
}

// Step 2: grid (ceil(N_q / 128), H_q, B). P slabs (128 rows x 64 keys) and V slabs (64 keys x D) stream
// through a kStages ring; P (the input type) and V are read by ldmatrix (V transposed), fp32 accumulators.
// Launch bounds as naive_scores'.
template <typename Element, int kHeadDim, int kNWarps, int kStages, bool Is_causal>
__global__ void __launch_bounds__(kNWarps* fa::kWarpSize, 1)
    naive_output(const __grid_constant__ fa::AttentionParams p) {
  constexpr naive::Tunables kT{kHeadDim, kNWarps, kStages, 16};  // kScoreBits does not reach this kernel
  static_assert(naive::violation(kT) == nullptr, "a config naive_config.h rejects");
  constexpr int kThreads = kNWarps * fa::kWarpSize;
  constexpr int kWarpRows = naive::kBlockM / naive::output_warps_m(kT);
  constexpr int kWarpCols = kHeadDim / naive::output_warps_n(kT);
  constexpr int kMT = kWarpRows / 16, kDT = kWarpCols / 8;
  constexpr int kPRowBytes = naive::kPvKeys * 2, kVRowBytes = kHeadDim * 2;
  constexpr int kPSlabBytes = naive::kBlockM * kPRowBytes, kVSlabBytes = naive::kPvKeys * kVRowBytes;
  static_assert(kStages * (kPSlabBytes + kVSlabBytes) == naive::output_shared_bytes(kT), "the host's size");
  extern __shared__ __align__(128) unsigned char smem[];

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / naive::output_warps_n(kT), warp_n = warp % naive::output_warps_n(kT);
  const fa::QueryTile tile = fa::query_tile<naive::kBlockM>(p);
  const int m0 = tile.m0, causal_offset = p.seqlen_k - p.seqlen_q;
  const int ld = naive::scratch_row_stride(p.seqlen_k);
  // Key slabs past the tile's last visible key hold P = 0 (causal): skipped, see the top of the file.
  const int n_blocks =
      fa::key_block_count<Is_causal, naive::kBlockM, naive::kPvKeys>(m0, {p.seqlen_k, causal_offset});
  const Element* prob =
      reinterpret_cast<const Element*>(p.scratch_p) + (fa::row_index0(p, tile.batch, tile.head) + m0) * ld;
  const Element* v = fa::v_slice<Element>(p, tile.batch, tile.kv_head);
  const unsigned s_p = fa::smem_addr(smem), s_v = s_p + kStages * kPSlabBytes;
  auto load = [&](int j) {
    const int slot = j % kStages, key0 = j * naive::kPvKeys;
    fa::load_tile_async<naive::kBlockM, naive::kPvKeys, kThreads>(s_p + slot * kPSlabBytes, prob + key0, ld,
                                                                  p.seqlen_q - m0, tid);
    fa::load_tile_async<naive::kPvKeys, kHeadDim, kThreads>(
        s_v + slot * kVSlabBytes, v + key0 * p.v_row_stride, p.v_row_stride, p.seqlen_k - key0, tid);
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_blocks) load(s);
    fa::cp_async_commit();
  }

  const fa::LaneOffsets lo(lane);
  const int p_rows = (warp_m * kWarpRows + lo.row_a) * kPRowBytes;
  const int v_rows = lo.row_a * kVRowBytes + warp_n * kWarpCols * 2;
  float o[kMT][kDT][4];
  fa::clear_accumulators(o);
  for (int j = 0; j < n_blocks; ++j) {
    fa::cp_async_wait<kStages - 2>();  // slab j landed everywhere; slab j-1's slot is free
    __syncthreads();
    if (j + kStages - 1 < n_blocks) load(j + kStages - 1);
    fa::cp_async_commit();
    const int slot = j % kStages;
    fa::warp_pv_shared<Element, kMT, kDT, naive::kPvKeys, kVRowBytes>(o, s_p + slot * kPSlabBytes + p_rows,
                                                                      s_v + slot * kVSlabBytes + v_rows, lo);
  }
  fa::cp_async_wait<0>();
  const int row0 = m0 + warp_m * kWarpRows + lane / 4;
  Element* o_base = fa::o_slice<Element>(p, tile.batch, tile.head);
  fa::store_o_from_registers<Element>(o, o_base + row0 * p.o_row_stride + warp_n * kWarpCols + 2 * (lane % 4),
                                      p.o_row_stride, p.seqlen_q - row0);
}
