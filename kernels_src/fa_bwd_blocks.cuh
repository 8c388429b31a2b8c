#pragma once
// The mma.sync block steps of the sm80-era backward kernels (fa2_sm80_bwd.cu, fa1_bwd.cu): one (key block,
// query block) step of the dK/dV loop, the dS^T tile in shared memory and the dQ = dS K product read from
// it, the warp split of the dQ tile, and the dK/dV stores.
#include "fa_backward.cuh"
#include "fa_mask.cuh"
#include "fa_mma.cuh"
#include "fa_params.h"
#include "fa_types.cuh"
#include "fa_warp_mma.cuh"

namespace fa {

// ---- dS^T tile in shared memory: kRows keys x kCols queries of 16-bit elements, row-major ----
// The kernels hold dS^T in C fragments (warps own key rows); dQ = dS K needs dS as an A operand with
// query rows, which ldmatrix.trans reads straight from this key-major tile. Swizzle per 16-byte chunk so
// that the 8 rows an ldmatrix (and a C-fragment store) touches at one logical chunk fall in 8 different
// bank groups: rows of >= 128 bytes XOR the chunk with the row's low 3 bits (as fa_copy.cuh); rows of
// 64 bytes (kCols = 32) hold two rows per 128-byte line, so they XOR with bits 1-2 of the row instead.
template <int kCols>
__device__ __forceinline__ int ds_tile_offset(int row, int chunk) {
  constexpr int kChunks = kCols / 8;
  static_assert(kChunks == 4 || kChunks % 8 == 0, "dS^T tile rows of 32 or a multiple of 64 queries");
  if constexpr (kChunks == 4) return (row * 4 + (chunk ^ ((row >> 1) & 3))) * 16;
  return (row * kChunks + (chunk ^ (row & 7))) * 16;  // XOR with a value < 8 touches the low 3 bits only
}

// dS^T (C fragments, kMT 16-key tiles x kNT 8-query tiles) packed once into mma A fragments of 16-bit
// elements: half the registers of the fp32 values, and the same registers feed both the dK product and
// the shared-memory copy (packing twice would keep the fp32 and the packed copies live together).
template <typename Element, int kMT, int kNT>
__device__ __forceinline__ void pack_a_fragments(unsigned (&a)[kMT][kNT / 2][4],
                                                 const float (&c)[kMT][kNT][4]) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int kk = 0; kk < kNT / 2; ++kk) {
      a[mt][kk][0] = ElementTraits<Element>::pack(c[mt][2 * kk][0], c[mt][2 * kk][1]);
      a[mt][kk][1] = ElementTraits<Element>::pack(c[mt][2 * kk][2], c[mt][2 * kk][3]);
      a[mt][kk][2] = ElementTraits<Element>::pack(c[mt][2 * kk + 1][0], c[mt][2 * kk + 1][1]);
      a[mt][kk][3] = ElementTraits<Element>::pack(c[mt][2 * kk + 1][2], c[mt][2 * kk + 1][3]);
    }
}

// Stores packed dS^T fragments (keys from key0: rows g and g+8 of each 16-key tile; a[..][0..1] hold
// query tile 2kk, a[..][2..3] tile 2kk+1) into the key-major tile.
template <int kCols, int kMT, int kKK>
__device__ __forceinline__ void store_ds_tile(unsigned tile, const unsigned (&a)[kMT][kKK][4], int key0,
                                              int lane) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int row = key0 + 16 * mt + 8 * hh + lane / 4;
#pragma unroll
      for (int kk = 0; kk < kKK; ++kk)
#pragma unroll
        for (int half = 0; half < 2; ++half)
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(tile + ds_tile_offset<kCols>(row, 2 * kk + half) +
                                                         4 * (lane % 4)),
                       "r"(a[mt][kk][2 * half + hh]));
    }
}

// o (kMT x kDT C tiles) += A B with A already packed (pack_a_fragments) and B = rows of a [k][d] tile
// read transposed (as warp_pv reads V).
template <typename Element, int kMT, int kKK, int kDT>
__device__ __forceinline__ void warp_packed_pv(float (&o)[kMT][kDT][4], const unsigned (&a)[kMT][kKK][4],
                                               unsigned v_rows, const LaneOffsets& lo) {
  constexpr int kRowBytes = kDT * 16;
#pragma unroll
  for (int kk = 0; kk < kKK; ++kk)
#pragma unroll
    for (int dp = 0; dp < kDT / 2; ++dp) {
      unsigned b[4];
      ldmatrix_x4_trans(b, v_rows + kk * 16 * kRowBytes + (dp / 4) * 128 + lo.off_a[dp % 4]);
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        mma_16816<Element>(o[mt][2 * dp], a[mt][kk], b[0], b[1]);
        mma_16816<Element>(o[mt][2 * dp + 1], a[mt][kk], b[2], b[3]);
      }
    }
}

// Warp split of the dQ tile (kBlockM queries x kHeadDim) over kNWarps warps: query tiles of 16 first,
// the head dim split across the remaining warps. Each warp holds kMT x kDT C tiles: 32 floats per thread
// at FA2's shapes (d64 128x128x8 warps, d128 64x128x8 warps), computed once per query block and then
// added to device memory, so they live only between the dS^T barrier and the red/RMW.
template <int kBlockM, int kHeadDim, int kNWarps>
struct DqSplit {
  static constexpr int kWarpsM = (kBlockM / 16 < kNWarps) ? kBlockM / 16 : kNWarps;
  static constexpr int kWarpsD = kNWarps / kWarpsM;
  static constexpr int kMT = kBlockM / 16 / kWarpsM;
  static constexpr int kDT = kHeadDim / 8 / kWarpsD;
  static_assert(kWarpsM * kWarpsD == kNWarps && kMT * kWarpsM * 16 == kBlockM, "whole query tiles per warp");
  static_assert(kDT % 2 == 0 && kDT * kWarpsD * 8 == kHeadDim, "pairs of 8-column head-dim tiles per warp");
};

// dq (kMT query tiles x kDT head-dim tiles) += dS K over kKeys keys. ds_tile: the key-major dS^T tile
// (kCols queries per row); k_tile: K (kKeys x kHeadDim, fa_copy.cuh layout). q0: first query of this
// warp; dpair0: first pair of 8-column head-dim tiles of this warp.
template <typename Element, int kMT, int kDT, int kKeys, int kCols, int kHeadDim>
__device__ __forceinline__ void warp_ds_k(float (&dq)[kMT][kDT][4], unsigned ds_tile, unsigned k_tile, int q0,
                                          int dpair0, const LaneOffsets& lo, int lane) {
  constexpr int kRowBytes = kHeadDim * 2;
#pragma unroll
  for (int kk = 0; kk < kKeys / 16; ++kk) {
    unsigned a[kMT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)  // matrix l/8: keys +8 (l/16), queries +8 ((l/8) % 2); transposed
      ldmatrix_x4_trans(
          a[mt], ds_tile + ds_tile_offset<kCols>(16 * kk + lo.row_b, (q0 + 16 * mt) / 8 + (lane / 8) % 2));
#pragma unroll
    for (int dp = 0; dp < kDT / 2; ++dp) {
      const int pair = dpair0 + dp;
      unsigned b[4];
      // Chunk 2 pair + l/16 of row 16 kk + row_a (row % 8 = l % 8), swizzled as fa_copy.cuh; computed, not
      // taken from lo.off_a, because `pair` depends on the warp and a runtime index would put lo in local
      // memory.
      ldmatrix_x4_trans(
          b, k_tile + (16 * kk + lo.row_a) * kRowBytes + (((2 * pair + lane / 16) ^ (lane % 8)) * 16));
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        mma_16816<Element>(dq[mt][2 * dp], a[mt], b[0], b[1]);
        mma_16816<Element>(dq[mt][2 * dp + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// Shared-memory tiles of one (key block, query block) step of the dK/dV loop.
struct BwdTiles {
  unsigned k, v, q, d_o, ds;  // ds: the key-major dS^T tile (only when kStoreDs)
  const float* lse_log2;      // kBlockM rows, log2 units (lse_log2_for_backward)
  const float* delta;         // kBlockM rows
};

// One step of FlashAttention-2's dK/dV loop for this warp's 16 * kMT key rows (from key_row_in_block, the
// thread's rows g, g+8 from key_row0) against the kBlockM queries from m0: S^T = K Q^T, P^T (<= 1, masked
// -> 0), dV += P^T dO, dP^T = V dO^T, dS^T = P^T (dP^T - D), dK += dS^T Q; with kStoreDs dS^T also goes
// to the shared tile for dQ = dS K. Used by fa2_sm80_bwd_dkdv and fa1_bwd_step.
template <typename Element, int kHeadDim, int kBlockM, int kMT, bool Is_causal, bool kStoreDs>
__device__ __forceinline__ void dkdv_block(float (&dk)[kMT][kHeadDim / 8][4],
                                           float (&dv)[kMT][kHeadDim / 8][4], const BwdTiles& t,
                                           const AttentionParams& p, int m0, int key_row_in_block,
                                           int key_row0, int causal_offset, float scale_log2,
                                           const LaneOffsets& lo, int lane) {
  constexpr int kNT = kBlockM / 8, kDT = kHeadDim / 8, kRowBytes = kHeadDim * 2;
  const unsigned s_k = t.k, s_v = t.v, s_q = t.q, s_do = t.d_o;
  const float* s_lse = t.lse_log2;
  const float* s_delta = t.delta;
  // S^T = K Q^T: this warp's key rows against all kBlockM queries.
  float s[kMT][kNT][4], dp[kMT][kNT][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[mt][nt][e] = dp[mt][nt][e] = 0.f;
  const unsigned warp_rows = (key_row_in_block + lo.row_a) * kRowBytes;
  warp_qk<Element, kMT, kNT, kHeadDim>(s, s_k + warp_rows, s_q + lo.row_b * kRowBytes, lo);
  // P^T = 2^(s * scale_log2 - lse_log2[query]) <= 1; masked (causal, padding keys) -> 0.
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
          const bool visible = key < key_limit<Is_causal>(query, p.seqlen_k, causal_offset);
          float& x = s[mt][nt][2 * hh + e];
          x = visible ? prob_of(x, scale_log2, s_lse[col]) : 0.f;
        }
    }
  warp_pv<Element, kMT, kNT, kDT>(dv, s, s_do + lo.row_a * kRowBytes, lo);                     // dV += P^T dO
  warp_qk<Element, kMT, kNT, kHeadDim>(dp, s_v + warp_rows, s_do + lo.row_b * kRowBytes, lo);  // dP^T
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dp[mt][nt][e] = ds_of(s[mt][nt][e], dp[mt][nt][e], s_delta[8 * nt + 2 * (lane % 4) + (e % 2)]);
  unsigned ds[kMT][kNT / 2][4];
  pack_a_fragments<Element>(ds, dp);
  // The dS^T stores go out before the dK product so that they drain while it runs.
  if constexpr (kStoreDs) store_ds_tile<kBlockM>(t.ds, ds, key_row_in_block, lane);
  warp_packed_pv<Element, kMT, kNT / 2, kDT>(dk, ds, s_q + lo.row_a * kRowBytes, lo);  // dK += dS^T Q
}

// dQ tile of one step: dq (DqSplit's C tiles of this warp) = dS K over the kBlockN keys of the block.
template <typename Element, int kBlockM, int kBlockN, int kHeadDim, int kNWarps>
__device__ __forceinline__ void dq_block(
    float (&dq)[DqSplit<kBlockM, kHeadDim, kNWarps>::kMT][DqSplit<kBlockM, kHeadDim, kNWarps>::kDT][4],
    unsigned s_ds, unsigned s_k, int warp, const LaneOffsets& lo, int lane) {
  using Dq = DqSplit<kBlockM, kHeadDim, kNWarps>;
  const int warp_m = warp % Dq::kWarpsM, warp_d = warp / Dq::kWarpsM;
#pragma unroll
  for (int mt = 0; mt < Dq::kMT; ++mt)
#pragma unroll
    for (int dt = 0; dt < Dq::kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) dq[mt][dt][e] = 0.f;
  warp_ds_k<Element, Dq::kMT, Dq::kDT, kBlockN, kBlockM, kHeadDim>(dq, s_ds, s_k, warp_m * Dq::kMT * 16,
                                                                   warp_d * Dq::kDT / 2, lo, lane);
}

// dK = scale * dS^T Q (dS is the gradient of the scaled scores) and dV as accumulated, for this thread's
// key rows key_row0 + 16 mt + 8 h < n_k, into the (batch, kv head) slices of dK and dV. (The slices are
// spelled here rather than through fa_tile_coords.cuh: that gave fa2_sm80_bwd_dkdv d128 4 more registers
// under NVRTC 13.0; this form compiles to the SASS the kernels' own loops did.)
template <typename Element, int kMT, int kDT>
__device__ __forceinline__ void store_dk_dv(const float (&dk)[kMT][kDT][4], const float (&dv)[kMT][kDT][4],
                                            float dk_scale, const AttentionParams& p, int batch, int kv_head,
                                            int key_row0, int lane) {
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
        *reinterpret_cast<unsigned*>(dk_out + key * p.k_row_stride + col) =
            ElementTraits<Element>::pack(dk[mt][dt][2 * hh] * dk_scale, dk[mt][dt][2 * hh + 1] * dk_scale);
        *reinterpret_cast<unsigned*>(dv_out + key * p.v_row_stride + col) =
            ElementTraits<Element>::pack(dv[mt][dt][2 * hh], dv[mt][dt][2 * hh + 1]);
      }
    }
}

}  // namespace fa
