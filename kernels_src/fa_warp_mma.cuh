#pragma once
// Warp-level products of the FlashAttention kernels on swizzled shared tiles (fa_copy.cuh layout):
//   S (kMT x kNT C tiles) += Q K^T over the head dim, and O (kMT x kDT C tiles) += P V with P repacked from
//   its C fragments into A fragments in registers, or (standard attention: naive.cu) P read from a swizzled
//   shared tile like Q. The addressing is described in fa2_sm80_fwd.cu, whose
//   inner loops are the same code written inline.
#include "fa_mma.cuh"

namespace fa {

// Per-lane ldmatrix offsets. A operand (Q) and transposed B (V): row (l%8) + 8((l/8)%2), chunk + l/16;
// B operand (K): row (l%8) + 8(l/16), chunk + (l/8)%2. off_*[t]: byte offset of logical chunk 2t + hi
// inside a 128-byte group of a row r with r % 8 = l % 8.
struct LaneOffsets {
  int row_a, row_b;
  int off_a[4], off_b[4];
  __device__ __forceinline__ explicit LaneOffsets(int lane) {
    row_a = (lane % 8) + 8 * ((lane / 8) % 2);
    row_b = (lane % 8) + 8 * (lane / 16);
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      off_a[t] = ((2 * t + lane / 16) ^ (lane % 8)) * 16;
      off_b[t] = ((2 * t + (lane / 8) % 2) ^ (lane % 8)) * 16;
    }
  }
};

// The A operands of one 16-wide k-step kk for kMT row tiles of a swizzled shared tile (Q, or naive's P):
// rows = shared address of the warp's first row + row_a rows, kRowBytes per row.
template <int kMT, int kRowBytes>
__device__ __forceinline__ void ldmatrix_a_tiles(unsigned (&a)[kMT][4], unsigned rows, int kk,
                                                 const LaneOffsets& lo) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
    ldmatrix_x4(a[mt], rows + mt * 16 * kRowBytes + (kk / 4) * 128 + lo.off_a[kk % 4]);
}

// O (kMT x kDT C tiles) += A (one 16-key k-step) V, V read transposed from a swizzled shared slab:
// v_step_rows = shared address of the k-step's first V row + row_a rows (+ the warp's first column).
template <typename Element, int kMT, int kDT, int kVRowBytes>
__device__ __forceinline__ void mma_a_times_v(float (&o)[kMT][kDT][4], const unsigned (&a)[kMT][4],
                                              unsigned v_step_rows, const LaneOffsets& lo) {
#pragma unroll
  for (int dp = 0; dp < kDT / 2; ++dp) {
    unsigned b[4];
    ldmatrix_x4_trans(b, v_step_rows + (dp / 4) * 128 + lo.off_a[dp % 4]);
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      mma_16816<Element>(o[mt][2 * dp], a[mt], b[0], b[1]);
      mma_16816<Element>(o[mt][2 * dp + 1], a[mt], b[2], b[3]);
    }
  }
}

// q_rows: shared address of the warp's first Q row + row_a rows; k_rows: of the first key + row_b rows.
template <typename Element, int kMT, int kNT, int kHeadDim>
__device__ __forceinline__ void warp_qk(float (&s)[kMT][kNT][4], unsigned q_rows, unsigned k_rows,
                                        const LaneOffsets& lo) {
  constexpr int kRowBytes = kHeadDim * 2;
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    unsigned a[kMT][4];
    ldmatrix_a_tiles<kMT, kRowBytes>(a, q_rows, kk, lo);
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      unsigned b[4];
      ldmatrix_x4(b, k_rows + np * 16 * kRowBytes + (kk / 4) * 128 + lo.off_b[kk % 4]);
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        mma_16816<Element>(s[mt][2 * np], a[mt], b[0], b[1]);
        mma_16816<Element>(s[mt][2 * np + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// v_rows: shared address of the warp's first key row of V + row_a rows.
template <typename Element, int kMT, int kNT, int kDT>
__device__ __forceinline__ void warp_pv(float (&o)[kMT][kDT][4], const float (&p)[kMT][kNT][4],
                                        unsigned v_rows, const LaneOffsets& lo) {
  constexpr int kRowBytes = kDT * 16;
#pragma unroll
  for (int kk = 0; kk < kNT / 2; ++kk) {
    unsigned a[kMT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      a[mt][0] = ElementTraits<Element>::pack(p[mt][2 * kk][0], p[mt][2 * kk][1]);
      a[mt][1] = ElementTraits<Element>::pack(p[mt][2 * kk][2], p[mt][2 * kk][3]);
      a[mt][2] = ElementTraits<Element>::pack(p[mt][2 * kk + 1][0], p[mt][2 * kk + 1][1]);
      a[mt][3] = ElementTraits<Element>::pack(p[mt][2 * kk + 1][2], p[mt][2 * kk + 1][3]);
    }
    mma_a_times_v<Element, kMT, kDT, kRowBytes>(o, a, v_rows + kk * 16 * kRowBytes, lo);
  }
}

// O (kMT x kDT C tiles) += P V with P read from a swizzled shared tile of kKeys keys per row (naive.cu's P,
// stored in the input type), as warp_qk reads Q, and V as warp_pv reads it. p_rows: shared address of the
// warp's first P row + row_a rows; v_rows: of the slab's first V row + row_a rows, plus the warp's first
// column in bytes (a multiple of 128: the swizzle phase of the row). kVRowBytes: bytes of a V row (2 D).
template <typename Element, int kMT, int kDT, int kKeys, int kVRowBytes>
__device__ __forceinline__ void warp_pv_shared(float (&o)[kMT][kDT][4], unsigned p_rows, unsigned v_rows,
                                               const LaneOffsets& lo) {
#pragma unroll
  for (int kk = 0; kk < kKeys / 16; ++kk) {
    unsigned a[kMT][4];
    ldmatrix_a_tiles<kMT, kKeys * 2>(a, p_rows, kk, lo);
    mma_a_times_v<Element, kMT, kDT, kVRowBytes>(o, a, v_rows + kk * 16 * kVRowBytes, lo);
  }
}

}  // namespace fa
