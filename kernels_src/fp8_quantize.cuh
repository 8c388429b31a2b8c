#pragma once
// FP8 operands made on the device, as numerics' host model makes them (numerics/quantized_operands.cpp):
// Q and K optionally rotated by incoherent processing's random-sign Walsh-Hadamard transform over the head
// dim (x -> x D H / sqrt(d), in fp64 like the host), each descale block's largest magnitude scaled onto
// the format's largest finite value, codes converted with saturation, descale = 1 / scale. The same bits
// as the host: fp8_quantize.h holds the arithmetic, a CPU test holds it against numerics, a [gpu] test
// compares the codes and descales (tests/kernels_src/fp8_quantize_gpu_test.cpp).
//
// Launched before a FP8 forward when its problem quantises on the device (tuner/families/fp8_quantize_
// launches.cpp), so a timed FP8 launch sequence includes the rotation and the quantisation:
//   per block:  fp8_quantize<Element, kHeadDim, false>: one CTA per descale block (blockIdx.x) of Q, K or
//               V (blockIdx.y): a first sweep over the block's rows finds its amax, a second (its rows
//               still in L2) writes the codes.
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

// Row `row` of the tensor (flat over matrices) into this lane's slice, signed and rotated when asked.
template <int kHeadDim>
__device__ __forceinline__ void load_row(const TensorView& t, long long row, int lane,
                                         double (&x)[per_lane<kHeadDim>()]) {
  constexpr int kPerLane = per_lane<kHeadDim>();
  struct alignas(2 * kPerLane) Slice {
    __nv_bfloat16 v[kPerLane];
  };
  const Slice s = *reinterpret_cast<const Slice*>(t.source + row * kHeadDim + lane * kPerLane);
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) x[j] = double(__bfloat162float(s.v[j]));
  if (!t.signs) return;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) x[j] *= double(t.signs[lane * kPerLane + j]);
  butterflies_in_lane<kPerLane>(x);
#pragma unroll
  for (int half = kPerLane; half < kHeadDim; half *= 2) {
    const int partner_mask = half / kPerLane;
    const bool lower = (lane & partner_mask) == 0;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j)
      x[j] = butterfly_across_lanes(x[j], __shfl_xor_sync(0xffffffffu, x[j], partner_mask), lower);
  }
  // The host's 1.0 / std::sqrt(double(d)), both correctly rounded.
  const double norm = __ddiv_rn(1.0, __dsqrt_rn(double(kHeadDim)));
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) x[j] = __dmul_rn(x[j], norm);
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

// The largest magnitude of the block's (rotated) values, in every thread. fmax ignores NaN, as the host's
// std::max does.
template <int kHeadDim>
__device__ double block_amax(const TensorView& t, BlockRows rows) {
  __shared__ double warp_amax[kWarps];
  const int lane = threadIdx.x % kWarpLanes;
  const int warp = threadIdx.x / kWarpLanes;
  double amax = 0.0;
  for (long long row = rows.first + warp; row < rows.last; row += kWarps) {
    double x[per_lane<kHeadDim>()];
    load_row<kHeadDim>(t, row, lane, x);
#pragma unroll
    for (int j = 0; j < per_lane<kHeadDim>(); ++j) amax = fmax(amax, fabs(x[j]));
  }
#pragma unroll
  for (int mask = kWarpLanes / 2; mask > 0; mask /= 2)
    amax = fmax(amax, __shfl_xor_sync(0xffffffffu, amax, mask));
  if (lane == 0) warp_amax[warp] = amax;
  __syncthreads();
  amax = warp_amax[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) amax = fmax(amax, warp_amax[w]);
  return amax;
}

// The block's codes: float(x) * scale, rounded to the format with saturation (numerics' round_to).
template <typename Element, int kHeadDim>
__device__ void write_codes(const TensorView& t, BlockRows rows, float scale) {
  constexpr int kPerLane = per_lane<kHeadDim>();
  const int lane = threadIdx.x % kWarpLanes;
  const int warp = threadIdx.x / kWarpLanes;
  for (long long row = rows.first + warp; row < rows.last; row += kWarps) {
    double x[kPerLane];
    load_row<kHeadDim>(t, row, lane, x);
    float y[kPerLane];
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) y[j] = __fmul_rn(__double2float_rn(x[j]), scale);
    unsigned char* out = t.codes + row * kHeadDim + lane * kPerLane;
    if constexpr (kPerLane == 2) {
      *reinterpret_cast<unsigned short*>(out) = fa::Fp8Traits<Element>::cvt2(y[0], y[1]);
    } else {
      static_assert(kPerLane % 4 == 0, "d 64 (2 per lane) or a multiple of 4 per lane");
#pragma unroll
      for (int j = 0; j < kPerLane; j += 4)
        reinterpret_cast<unsigned*>(out)[j / 4] = fa::pack_fp8x4<Element>(y[j], y[j + 1], y[j + 2], y[j + 3]);
    }
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
__global__ void __launch_bounds__(fp8q::kThreads)
    fp8_quantize(const __grid_constant__ fa::AttentionParams p) {
  const fp8q::TensorView t = fp8q::tensor_view(p, blockIdx.y);
  const int block = blockIdx.x;
  if (block >= t.blocks) return;
  const fp8q::BlockRows rows = fp8q::block_rows(t, block, p.descale_block_rows);
  float scale;
  if constexpr (kTensorScale) {
    scale = float(*t.scale);
  } else {
    scale = fp8q::scale_for_amax(fp8q::block_amax<kHeadDim>(t, rows), fp8q::max_finite<Element>());
    if (threadIdx.x == 0) t.descales[block] = __fdiv_rn(1.0f, scale);
  }
  fp8q::write_codes<Element, kHeadDim>(t, rows, scale);
}

// Per-tensor scaling, first launch: each block's amax.
template <int kHeadDim>
__global__ void __launch_bounds__(fp8q::kThreads)
    fp8_block_amax(const __grid_constant__ fa::AttentionParams p) {
  const fp8q::TensorView t = fp8q::tensor_view(p, blockIdx.y);
  const int block = blockIdx.x;
  if (block >= t.blocks) return;
  const double amax = fp8q::block_amax<kHeadDim>(t, fp8q::block_rows(t, block, p.descale_block_rows));
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
