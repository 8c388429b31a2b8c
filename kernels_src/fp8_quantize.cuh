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
// The parts: one thread's slice and its values (fp8_quantize_values.cuh), the two sweeps over a block
// (fp8_quantize_sweeps.cuh); this file holds the three kernels. fa3_sm90's program adds a fourth,
// fp8_quantize_transposed_v (fp8_quantize_transposed_v.cuh: V's codes written as its V^T).
#include "fp8_quantize_sweeps.cuh"

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
    fp8q::quantize_block<Element, kHeadDim>(t, rows, block, kept);
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
