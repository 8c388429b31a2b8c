#pragma once
// Element types and register packing for the FlashAttention kernels. NVRTC-only device code: CUDA's own
// fp16/bf16/fp8 headers and nothing else.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace fa {

// log2(e): scores are scaled by softmax_scale * kLog2e once so that exp2 (one MUFU.EX2) replaces exp.
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
// -inf: the running max of a row before any key, and the LSE of a fully masked row.
__device__ __forceinline__ float neg_inf() {
  return -__int_as_float(0x7f800000);
}

// The shared-memory (state space) address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

template <typename T>
struct ElementTraits;

template <>
struct ElementTraits<__half> {
  static constexpr bool kIsBf16 = false;
  // Two floats into one 32-bit register of two halves (the A/B operand format of mma.sync).
  static __device__ __forceinline__ unsigned pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
  }
};

template <>
struct ElementTraits<__nv_bfloat16> {
  static constexpr bool kIsBf16 = true;
  static __device__ __forceinline__ unsigned pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
  }
};

}  // namespace fa
