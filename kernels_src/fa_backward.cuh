#pragma once
// The backward's arithmetic, shared by every backward family (fa2_sm80_bwd.cu, fa1_bwd.cu, fa3_sm90_bwd):
// the LSE in log2 units, the recomputed probability, dS, the dK scale, the fp32 RED, and the two small
// kernels around the main ones (D = rowsum(dO * O) with the clearing of the fp32 dQ accumulator; fp32 dQ
// -> output dtype). The mma.sync block steps of the sm80 families are fa_bwd_blocks.cuh. Backward mutant
// switches sit here and in the kernel files, one line per kernel path (kernels_src/README.md lists where).
#include "fa_arch.h"
#include "fa_copy.cuh"
#include "fa_mask.cuh"
#include "fa_mma.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_types.cuh"
#include "fa_warp_mma.cuh"

namespace fa {

// LSE in log2 units as the backward uses it: P = 2^(s * scale_log2 - lse_log2). A row with no visible key
// (LSE = -inf) and a padding row past n_q get +inf, so every P of theirs is 2^(-inf) = 0 rather than
// 2^(+inf).
__device__ __forceinline__ float lse_log2_for_backward(float lse, bool row_valid) {
  return (!row_valid || lse == neg_inf()) ? -neg_inf() : lse * kLog2e;
}

// P = 2^(s * scale_log2 - lse_log2), clamped to P <= 1. Mathematically the argument is <= 0 (LSE is at
// least the row's largest scaled score), but LSE is stored in natural log and converted twice
// (m * scale * log2e * ln2 in the forward, * log2e here): at scores near the dtype maximum (~1e11 after
// the product, input family near_dtype_max) that rounding alone leaves arguments up to +1000 and ex2
// returns inf (H200, 2026-11-29). The fminf costs one FMNMX per element and changes no in-range value.
__device__ __forceinline__ float prob_of(float s, float scale_log2, float lse_log2) {
  return exp2_approx(fminf(fmaf(s, scale_log2, -lse_log2), 0.f));
}

// dS = P * (dP - D), the gradient of the scaled scores (D = rowsum(dO * O) of the query row).
__device__ __forceinline__ float ds_of(float p, float dp, float delta) {
#ifdef FA_MUTANT_BWD_MISSING_DELTA
  return p * dp;  // [bwd-missing-delta] dS = P * dP without subtracting D
#else
  return p * (dp - delta);
#endif
}

// dK = scale * dS^T Q: dS is the gradient of the scaled scores, so dK (and dQ) carry the softmax scale.
__device__ __forceinline__ float dk_scale_of(float scale_log2) {
#ifdef FA_MUTANT_BWD_DK_MISSING_SCALE
  return 1.f;  // [bwd-dk-missing-scale] dK not multiplied by the softmax scale
#else
  return scale_log2 * kLn2;
#endif
}

// Two adjacent fp32 values added to device memory without returning the old value (a RED, not an ATOM:
// no round trip to the SM). sm_90 has the vector form, one instruction for both (PTX 8.1).
__device__ __forceinline__ void red_add_f32x2(float* addr, float a, float b) {
#if __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(addr), "f"(a), "f"(b) : "memory");
#else
  asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(addr), "f"(a) : "memory");
  asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(addr + 1), "f"(b) : "memory");
#endif
}

}  // namespace fa

// ---- the small kernels before and after the main backward launches ----

// D = rowsum(dO * O) per query row (fp32), one warp per row; grid ceil(B * H_q * N_q / kNWarps), block
// 32 * kNWarps. kClearDqAccum: also zero the row's fp32 dQ accumulator (atomic dQ mode), in the same pass
// so that it costs no launch.
// dQ's fp32 accumulator, element (row, col) of head bh: row-major, as the REDs of every family add to it
// (fa3_sm90_bwd's kDqBulk uses its own tiles, fa3::BwdDqTiles, with the same offset()).
struct DqRowMajor {
  template <int kHeadDim>
  static __device__ __forceinline__ long long offset(long long bh, int seqlen_q, int row, int col) {
    return (bh * seqlen_q + row) * kHeadDim + col;
  }
};

template <typename Element, int kHeadDim, int kNWarps, bool kClearDqAccum, class DqLayout = DqRowMajor>
__global__ void __launch_bounds__(fa::kWarpSize* kNWarps)
    fa_bwd_preprocess(const __grid_constant__ fa::AttentionParams p) {
  const long long row = static_cast<long long>(blockIdx.x) * kNWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= static_cast<long long>(p.batch) * p.heads_q * p.seqlen_q) return;
  const int i = static_cast<int>(row % p.seqlen_q);
  const long long bh = row / p.seqlen_q;
  const int head = static_cast<int>(bh % p.heads_q), batch = static_cast<int>(bh / p.heads_q);
  const long long offset = batch * p.o_batch_stride + head * p.o_head_stride + i * p.o_row_stride;
  const Element* o = static_cast<const Element*>(static_cast<const void*>(p.o)) + offset;
  const Element* d_o = static_cast<const Element*>(p.d_o) + offset;  // dO shares O's strides
  float acc = 0.f;
  for (int e = lane; e < kHeadDim; e += 32) acc += static_cast<float>(o[e]) * static_cast<float>(d_o[e]);
  for (int s = 16; s > 0; s /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, s);
  if (lane == 0) p.delta[row] = acc;
  if (p.dq_semaphore != nullptr && lane == 0) p.dq_semaphore[row] = 0;
  if constexpr (kClearDqAccum) {
    for (int e = 2 * lane; e < kHeadDim; e += 64)
      *reinterpret_cast<float2*>(p.dq_accum + DqLayout::template offset<kHeadDim>(bh, p.seqlen_q, i, e)) =
          make_float2(0.f, 0.f);
  }
}

// dQ = scale * accumulator, in the output dtype. 8 elements per thread (two 16-byte loads, one 16-byte
// store); grid ceil(B * H_q * N_q * kHeadDim / (8 * kThreads)), block kThreads = 128.
template <typename Element, int kHeadDim, class DqLayout = DqRowMajor>
__global__ void __launch_bounds__(128) fa_bwd_dq_convert(const __grid_constant__ fa::AttentionParams p) {
  constexpr int kPerThread = 8, kThreadsPerRow = kHeadDim / kPerThread;
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = idx / kThreadsPerRow;
  if (row >= static_cast<long long>(p.batch) * p.heads_q * p.seqlen_q) return;
  const int col = static_cast<int>(idx % kThreadsPerRow) * kPerThread;
  const int i = static_cast<int>(row % p.seqlen_q);
  const long long bh = row / p.seqlen_q;
  const int head = static_cast<int>(bh % p.heads_q), batch = static_cast<int>(bh / p.heads_q);
  const float scale = fa::scale_log2_of(p) * fa::kLn2;
  // 8 consecutive columns lie in one row of either layout's tile (its columns come in 64s).
  const float* accum = p.dq_accum + DqLayout::template offset<kHeadDim>(bh, p.seqlen_q, i, col);
  const float4 lo = *reinterpret_cast<const float4*>(accum);
  const float4 hi = *reinterpret_cast<const float4*>(accum + 4);
  uint4 out;
  out.x = fa::ElementTraits<Element>::pack(lo.x * scale, lo.y * scale);
  out.y = fa::ElementTraits<Element>::pack(lo.z * scale, lo.w * scale);
  out.z = fa::ElementTraits<Element>::pack(hi.x * scale, hi.y * scale);
  out.w = fa::ElementTraits<Element>::pack(hi.z * scale, hi.w * scale);
  Element* dq = static_cast<Element*>(p.d_q) + batch * p.o_batch_stride + head * p.o_head_stride +
                i * p.o_row_stride + col;
  *reinterpret_cast<uint4*>(dq) = out;
}
