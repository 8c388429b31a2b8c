#pragma once
// fp8_quantize.cuh's parts, one thread's slice of a descale block: the tensor (Q, K or V) and block it
// belongs to, the 16 bf16 it loads per row, and the values the host quantises from them (x -> x D H /
// sqrt(d) in fp64 for rotated Q and K, the bf16 value for V) with their amax.
#include "fa_params.h"
#include "fa_types.cuh"
#include "fp8_quantize.h"

namespace fp8q {

// One of Q, K, V (t = 0, 1, 2) as the quantisation sees it.
struct TensorView {
  const __nv_bfloat16* source;
  unsigned char* codes;
  float* descales;     // one per block
  double* amax;        // one per block (per-tensor scaling's scratch)
  double* scale;       // per-tensor scaling: the tensor's scale (as a double holding a float)
  const float* signs;  // null: not rotated
  int matrices;
  int rows;
  int blocks;  // matrices * blocks_per_matrix
};

__device__ __forceinline__ TensorView tensor_view(const fa::AttentionParams& p, int t) {
  const int q_matrices = p.batch * p.heads_q;
  const int kv_matrices = p.batch * p.heads_kv;
  const int q_blocks = q_matrices * blocks_per_matrix(p.seqlen_q, p.descale_block_rows);
  const int kv_blocks = kv_matrices * blocks_per_matrix(p.seqlen_k, p.descale_block_rows);
  TensorView v;
  v.source = static_cast<const __nv_bfloat16*>(p.fp8_source[t]);
  v.codes = static_cast<unsigned char*>(p.fp8_codes[t]);
  v.descales = p.fp8_descales[t];
  const int offset = t == 0 ? 0 : q_blocks + (t - 1) * kv_blocks;
  v.amax = p.fp8_amax ? p.fp8_amax + offset : nullptr;
  v.scale = p.fp8_amax ? p.fp8_amax + q_blocks + 2 * kv_blocks + t : nullptr;
  v.signs = t < 2 ? p.fp8_rotation_signs : nullptr;  // V is never rotated
  v.matrices = t == 0 ? q_matrices : kv_matrices;
  v.rows = t == 0 ? p.seqlen_q : p.seqlen_k;
  v.blocks = t == 0 ? q_blocks : kv_blocks;
  return v;
}

// The rows [first, last) of one block, as flat rows of the tensor.
struct BlockRows {
  long long first, last;
};

__device__ __forceinline__ BlockRows block_rows(const TensorView& t, int block, int block_rows) {
  const int per_matrix = blocks_per_matrix(t.rows, block_rows);
  const int matrix = block / per_matrix;
  const int start = (block % per_matrix) * block_rows;
  const int end = min(start + block_rows, t.rows);
  const long long base = (long long)matrix * t.rows;
  return {base + start, base + end};
}

// This thread's place in a block: its slice's first column, its row within a layer, the block's layers; and
// where its codes go: one 16-byte store per row of the row-major codes (the sweeps take another owner for
// a V^T, fp8_quantize_transposed_v.cuh).
template <int kHeadDim>
struct SliceOwner {
  int column;
  int row_in_layer;
  int layers;

  __device__ __forceinline__ SliceOwner(const TensorView&, BlockRows rows)
      : column(int(threadIdx.x % lanes_per_row<kHeadDim>()) * kSliceElements),
        row_in_layer(int(threadIdx.x / lanes_per_row<kHeadDim>())),
        layers(int((rows.last - rows.first + rows_per_layer<kHeadDim>() - 1) / rows_per_layer<kHeadDim>())) {}

  __device__ __forceinline__ long long row(BlockRows rows, int layer) const {
    return rows.first + (long long)layer * rows_per_layer<kHeadDim>() + row_in_layer;
  }
  __device__ __forceinline__ void store(const TensorView& t, int, long long row, uint4 codes) const {
    *reinterpret_cast<uint4*>(t.codes + row * kHeadDim + column) = codes;
  }
};

// 16 bf16 of one row: two 16-byte loads. Rows past the block read as zeros, so every lane of a warp takes
// part in the cross-lane stages (a zero neither raises an amax nor is stored).
struct alignas(16) RawSlice {
  uint4 half[2];
};

template <int kHeadDim>
__device__ __forceinline__ RawSlice load_slice(const TensorView& t, BlockRows rows, long long row,
                                               int column) {
  RawSlice r{};
  if (row < rows.last) {
    const uint4* src = reinterpret_cast<const uint4*>(t.source + row * kHeadDim + column);
    r.half[0] = src[0];
    r.half[1] = src[1];
  }
  return r;
}

__device__ __forceinline__ float element(const RawSlice& r, int j) {
  const __nv_bfloat16* v = reinterpret_cast<const __nv_bfloat16*>(&r);
  return __bfloat162float(v[j]);
}

// Bit j: whether the rotation's sign of this thread's element j is -1 (fp8_rotation_signs holds +-1).
template <int kHeadDim>
__device__ __forceinline__ unsigned negative_signs(const TensorView& t, int column) {
  unsigned bits = 0;
  if (!t.signs) return bits;
#pragma unroll
  for (int j = 0; j < kSliceElements; ++j) bits |= unsigned(t.signs[column + j] < 0.0f) << j;
  return bits;
}

// x[j] = double(bf16 j) * (+-1), the host's signed values, without a conversion instruction (fp64
// conversions run at a quarter of fp64 addition's rate): the bf16's sign, exponent and mantissa bits
// shifted into a double's high word (the sign flipped where the rotation's sign is -1) are that value times
// 2^-896, subnormal bf16 included (a subnormal double then), and one exact multiplication by 2^896 restores
// it. An exponent of all ones (infinity, NaN) gets the double's all-ones exponent: infinity stays infinity,
// a NaN a NaN.
__device__ __forceinline__ unsigned double_high_word(unsigned sign_exponent_mantissa_at_31, bool all_ones) {
  return all_ones ? sign_exponent_mantissa_at_31 | 0x7ff00000u : sign_exponent_mantissa_at_31;
}

__device__ __forceinline__ void exact_signed_doubles(const RawSlice& raw, unsigned negative,
                                                     double (&x)[kSliceElements]) {
  const unsigned* words = reinterpret_cast<const unsigned*>(&raw);
  constexpr double kTwoTo896 = 0x1p896;
#pragma unroll
  for (int w = 0; w < kSliceElements / 2; ++w) {
    const unsigned word = words[w];
    const unsigned flip_lo = ((negative >> (2 * w)) & 1u) << 31;
    const unsigned flip_hi = ((negative >> (2 * w + 1)) & 1u) << 31;
    const unsigned lo = double_high_word((((word & 0x8000u) << 16) | ((word & 0x7fffu) << 13)) ^ flip_lo,
                                         (word & 0x7f80u) == 0x7f80u);
    const unsigned hi = double_high_word(((word & 0x80000000u) | ((word >> 3) & 0x0fffe000u)) ^ flip_hi,
                                         (word & 0x7f800000u) == 0x7f800000u);
    x[2 * w] = __dmul_rn(__hiloint2double(int(lo), 0), kTwoTo896);
    x[2 * w + 1] = __dmul_rn(__hiloint2double(int(hi), 0), kTwoTo896);
  }
}

// A slice as the host quantises it: y = float(x) of the (rotated) values; amax raised to their largest
// magnitude in fp64. Unrotated (V, or no incoherent processing), x is the bf16 value, exact in fp32, so the
// fp32 max converted to fp64 is the host's fp64 max. fmax ignores NaN, as the host's std::max does.
template <int kHeadDim>
__device__ __forceinline__ void quantisation_values(const TensorView& t, const RawSlice& raw,
                                                    unsigned negative, float (&y)[kSliceElements],
                                                    double& amax) {
  if (!t.signs) {
    float amax_f = 0.0f;
#pragma unroll
    for (int j = 0; j < kSliceElements; ++j) {
      y[j] = element(raw, j);
      amax_f = fmaxf(amax_f, fabsf(y[j]));
    }
    amax = fmax(amax, double(amax_f));
    return;
  }
  double x[kSliceElements];
  exact_signed_doubles(raw, negative, x);
  butterflies_in_lane<kSliceElements>(x);
  const int lane = int(threadIdx.x % kWarpLanes);
#pragma unroll
  for (int half = kSliceElements; half < kHeadDim; half *= 2) {
    const int partner_mask = half / kSliceElements;
    const double sign = own_sign((lane & partner_mask) == 0);
#pragma unroll
    for (int j = 0; j < kSliceElements; ++j)
      x[j] = butterfly_across_lanes(x[j], __shfl_xor_sync(0xffffffffu, x[j], partner_mask), sign);
  }
  // The host's 1.0 / std::sqrt(double(d)), both correctly rounded.
  const double norm = __ddiv_rn(1.0, __dsqrt_rn(double(kHeadDim)));
#pragma unroll
  for (int j = 0; j < kSliceElements; ++j) {
    x[j] = __dmul_rn(x[j], norm);
    amax = fmax(amax, fabs(x[j]));
    y[j] = __double2float_rn(x[j]);
  }
}

}  // namespace fp8q
