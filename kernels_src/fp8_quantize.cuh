#pragma once
// FP8 operands made on the device, as numerics' host model makes them (numerics/quantized_operands.cpp):
// Q and K optionally rotated by incoherent processing's random-sign Walsh-Hadamard transform over the head
// dim (x -> x D H / sqrt(d), in fp64 like the host), each descale block's largest magnitude scaled onto
// the format's largest finite value, codes converted with saturation, descale = 1 / scale. The same bits
// as the host: fp8_quantize.h holds the arithmetic, a CPU test holds it against numerics, a [gpu] test
// compares the codes and descales (tests/kernels_src/fp8_quantize_gpu_test.cpp).
//
// Launched before a FP8 forward when its problem quantises on the device (device/families/fp8_quantize_
// launches.cpp), so a timed FP8 launch sequence includes the rotation and the quantisation:
//   per block:  fp8_quantize<Element, kHeadDim, false>: one CTA per descale block (blockIdx.x) of Q, K or
//               V (blockIdx.y): an amax sweep over the block's rows (each thread a 16-element slice, the
//               next row's 16-byte loads issued before this one's arithmetic) keeps the values it
//               quantises on chip (KeptValues), so the code sweep rotates again only the rows past them.
//   per tensor: fp8_block_amax<kHeadDim> (amax per block) -> fp8_tensor_scale<Element> (one CTA per
//               tensor: the tensor's scale, its descale written into every block) -> fp8_quantize<...,
//               true> (codes with the tensor's scale).
// Blocks are fa_params.h's descale blocks: descale_block_rows rows of one (batch, head) matrix.
#include "fa_fp8.cuh"
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

// This thread's place in a block: its slice's first column, its row within a layer, the block's layers.
template <int kHeadDim>
struct SliceOwner {
  int column;
  int row_in_layer;
  int layers;

  __device__ __forceinline__ explicit SliceOwner(BlockRows rows)
      : column(int(threadIdx.x % lanes_per_row<kHeadDim>()) * kSliceElements),
        row_in_layer(int(threadIdx.x / lanes_per_row<kHeadDim>())),
        layers(int((rows.last - rows.first + rows_per_layer<kHeadDim>() - 1) / rows_per_layer<kHeadDim>())) {}

  __device__ __forceinline__ long long row(BlockRows rows, int layer) const {
    return rows.first + (long long)layer * rows_per_layer<kHeadDim>() + row_in_layer;
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

// The largest of every thread's amax, in every thread.
__device__ __forceinline__ double cta_max(double amax) {
  __shared__ double warp_amax[kWarps];
#pragma unroll
  for (int mask = kWarpLanes / 2; mask > 0; mask /= 2)
    amax = fmax(amax, __shfl_xor_sync(0xffffffffu, amax, mask));
  if (threadIdx.x % kWarpLanes == 0) warp_amax[threadIdx.x / kWarpLanes] = amax;
  __syncthreads();
  amax = warp_amax[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) amax = fmax(amax, warp_amax[w]);
  return amax;
}

// The values of a block kept on chip between its amax sweep and its code sweep, so the rotation runs once
// per row: layer 0 in registers, the next kSharedLayers in shared memory (as float4 [layer][quad][thread]:
// a warp's 16-byte accesses are 512 contiguous bytes), the rest recomputed. 5 x 8 KiB: 5 CTAs per SM.
// Headline d128, 128-row blocks (8 layers): 6 kept, 2 recomputed; d64 (4 layers): all kept.
constexpr int kSharedLayers = 5;
constexpr int kCtasPerSm = 5;  // the registers to match: at most 102 a thread
constexpr int kQuads = kSliceElements / 4;

struct KeptValues {
  float first[kSliceElements];
  float4* shared;  // kSharedLayers x kQuads x kThreads

  __device__ __forceinline__ void put(int layer, const float (&y)[kSliceElements]) {
    if (layer == 0) {
#pragma unroll
      for (int j = 0; j < kSliceElements; ++j) first[j] = y[j];
    } else if (layer <= kSharedLayers) {
#pragma unroll
      for (int q = 0; q < kQuads; ++q)
        shared[((layer - 1) * kQuads + q) * kThreads + threadIdx.x] =
            make_float4(y[4 * q], y[4 * q + 1], y[4 * q + 2], y[4 * q + 3]);
    }
  }
  __device__ __forceinline__ static bool holds(int layer) {
    return layer <= kSharedLayers;
  }
  __device__ __forceinline__ void get(int layer, float (&y)[kSliceElements]) const {
    if (layer == 0) {
#pragma unroll
      for (int j = 0; j < kSliceElements; ++j) y[j] = first[j];
    } else {
#pragma unroll
      for (int q = 0; q < kQuads; ++q) {
        const float4 v = shared[((layer - 1) * kQuads + q) * kThreads + threadIdx.x];
        y[4 * q] = v.x;
        y[4 * q + 1] = v.y;
        y[4 * q + 2] = v.z;
        y[4 * q + 3] = v.w;
      }
    }
  }
};

// The block's amax over every layer (the next layer's loads issued before this one's arithmetic); with a
// KeptValues, its values kept for write_codes.
template <int kHeadDim>
__device__ __forceinline__ double block_amax(const TensorView& t, BlockRows rows, KeptValues* kept) {
  const SliceOwner<kHeadDim> me(rows);
  const unsigned negative = negative_signs<kHeadDim>(t, me.column);
  double amax = 0.0;
  RawSlice next = load_slice<kHeadDim>(t, rows, me.row(rows, 0), me.column);
  for (int layer = 0; layer < me.layers; ++layer) {
    const RawSlice raw = next;
    if (layer + 1 < me.layers) next = load_slice<kHeadDim>(t, rows, me.row(rows, layer + 1), me.column);
    float y[kSliceElements];
    quantisation_values<kHeadDim>(t, raw, negative, y, amax);
    if (kept) kept->put(layer, y);
  }
  return cta_max(amax);
}

// The block's codes: float(x) * scale, rounded to the format with saturation (numerics' round_to), one
// 16-byte store per slice; values from `kept` where it holds them, else loaded and rotated again.
template <typename Element, int kHeadDim>
__device__ __forceinline__ void write_codes(const TensorView& t, BlockRows rows, float scale,
                                            const KeptValues* kept) {
  const SliceOwner<kHeadDim> me(rows);
  const unsigned negative = negative_signs<kHeadDim>(t, me.column);
  for (int layer = 0; layer < me.layers; ++layer) {
    const long long row = me.row(rows, layer);
    float y[kSliceElements];
    if (kept && kept->holds(layer)) {
      kept->get(layer, y);
    } else {
      double ignored = 0.0;
      quantisation_values<kHeadDim>(t, load_slice<kHeadDim>(t, rows, row, me.column), negative, y, ignored);
    }
    if (row >= rows.last) continue;
    uint4 codes;
    unsigned* words = reinterpret_cast<unsigned*>(&codes);
#pragma unroll
    for (int q = 0; q < kQuads; ++q)
      words[q] = fa::pack_fp8x4<Element>(__fmul_rn(y[4 * q], scale), __fmul_rn(y[4 * q + 1], scale),
                                         __fmul_rn(y[4 * q + 2], scale), __fmul_rn(y[4 * q + 3], scale));
    *reinterpret_cast<uint4*>(t.codes + row * kHeadDim + me.column) = codes;
  }
}

template <typename Element>
__host__ __device__ constexpr double max_finite() {
  return double(fa::Fp8Traits<Element>::kMaxFinite);
}

}  // namespace fp8q

// kTensorScale false: per-block scaling, each CTA finds its block's scale; true: the tensor's scale from
// fp8_tensor_scale.
template <typename Element, int kHeadDim, bool kTensorScale>
__global__ void __launch_bounds__(fp8q::kThreads, fp8q::kCtasPerSm)
    fp8_quantize(const __grid_constant__ fa::AttentionParams p) {
  const fp8q::TensorView t = fp8q::tensor_view(p, blockIdx.y);
  const int block = blockIdx.x;
  if (block >= t.blocks) return;
  const fp8q::BlockRows rows = fp8q::block_rows(t, block, p.descale_block_rows);
  if constexpr (kTensorScale) {
    fp8q::write_codes<Element, kHeadDim>(t, rows, float(*t.scale), nullptr);
  } else {
    __shared__ float4 kept_shared[fp8q::kSharedLayers * fp8q::kQuads * fp8q::kThreads];
    fp8q::KeptValues kept;
    kept.shared = kept_shared;
    const float scale =
        fp8q::scale_for_amax(fp8q::block_amax<kHeadDim>(t, rows, &kept), fp8q::max_finite<Element>());
    if (threadIdx.x == 0) t.descales[block] = __fdiv_rn(1.0f, scale);
    fp8q::write_codes<Element, kHeadDim>(t, rows, scale, &kept);
  }
}

// Per-tensor scaling, first launch: each block's amax.
template <int kHeadDim>
__global__ void __launch_bounds__(fp8q::kThreads)
    fp8_block_amax(const __grid_constant__ fa::AttentionParams p) {
  const fp8q::TensorView t = fp8q::tensor_view(p, blockIdx.y);
  const int block = blockIdx.x;
  if (block >= t.blocks) return;
  const double amax =
      fp8q::block_amax<kHeadDim>(t, fp8q::block_rows(t, block, p.descale_block_rows), nullptr);
  if (threadIdx.x == 0) t.amax[block] = amax;
}

// Per-tensor scaling, second launch (one CTA per tensor, blockIdx.y): the tensor's amax, scale and descale.
template <typename Element>
__global__ void __launch_bounds__(fp8q::kThreads)
    fp8_tensor_scale(const __grid_constant__ fa::AttentionParams p) {
  __shared__ double warp_amax[fp8q::kWarps];
  __shared__ float tensor_scale;
  const fp8q::TensorView t = fp8q::tensor_view(p, blockIdx.y);
  double amax = 0.0;
  for (int b = threadIdx.x; b < t.blocks; b += fp8q::kThreads) amax = fmax(amax, t.amax[b]);
#pragma unroll
  for (int mask = fp8q::kWarpLanes / 2; mask > 0; mask /= 2)
    amax = fmax(amax, __shfl_xor_sync(0xffffffffu, amax, mask));
  if (threadIdx.x % fp8q::kWarpLanes == 0) warp_amax[threadIdx.x / fp8q::kWarpLanes] = amax;
  __syncthreads();
  if (threadIdx.x == 0) {
    double tensor_amax = warp_amax[0];
    for (int w = 1; w < fp8q::kWarps; ++w) tensor_amax = fmax(tensor_amax, warp_amax[w]);
    tensor_scale = fp8q::scale_for_amax(tensor_amax, fp8q::max_finite<Element>());
    *t.scale = double(tensor_scale);
  }
  __syncthreads();
  const float descale = __fdiv_rn(1.0f, tensor_scale);
  for (int b = threadIdx.x; b < t.blocks; b += fp8q::kThreads) t.descales[b] = descale;
}
