#pragma once
// fp8_quantize.cuh's parts, a CTA's two sweeps over its descale block: the amax sweep (every row's values,
// those that fit kept on chip: KeptValues) and the code sweep (float(x) * scale rounded to FP8 with
// saturation, the values not kept loaded and rotated again).
#include "fa_fp8.cuh"
#include "fp8_quantize_values.cuh"

namespace fp8q {

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
template <int kHeadDim, typename Owner = SliceOwner<kHeadDim>>
__device__ __forceinline__ double block_amax(const TensorView& t, BlockRows rows, KeptValues* kept) {
  const Owner me(t, rows);
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
template <typename Element, int kHeadDim, typename Owner = SliceOwner<kHeadDim>>
__device__ __forceinline__ void write_codes(const TensorView& t, BlockRows rows, float scale,
                                            const KeptValues* kept) {
  const Owner me(t, rows);
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
    me.store(t, layer, row, codes);
  }
}

template <typename Element>
__host__ __device__ constexpr double max_finite() {
  return double(fa::Fp8Traits<Element>::kMaxFinite);
}

// Per-block scaling, one block: its amax (the values kept), scale and descale, then its codes.
template <typename Element, int kHeadDim, typename Owner = SliceOwner<kHeadDim>>
__device__ __forceinline__ void quantize_block(const TensorView& t, BlockRows rows, int block,
                                               KeptValues& kept) {
  const float scale = scale_for_amax(block_amax<kHeadDim, Owner>(t, rows, &kept), max_finite<Element>());
  if (threadIdx.x == 0) t.descales[block] = __fdiv_rn(1.0f, scale);
  write_codes<Element, kHeadDim, Owner>(t, rows, scale, &kept);
}

}  // namespace fp8q
