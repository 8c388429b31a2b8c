#pragma once
// The architecture facts every family's kernels and the host both compute with, written once: plain
// constexpr C++ that NVRTC (the kernels' static_asserts, thread counts, launch bounds) and g++
// (device/arch_limits.hpp: pruning, launch sizes) both compile. tests/kernels_src/arch_test.cpp
// compiles this header under NVRTC against the values the host was built with.

// A function both compilers call (the families' *_config.h, fp8_quantize.h): NVRTC accepts no unannotated
// (host) function, g++ knows no execution-space annotation. FA_CONFIG_FN: the constexpr ones.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FA_HOST_DEVICE __host__ __device__
#else
#define FA_HOST_DEVICE
#endif
#define FA_CONFIG_FN constexpr FA_HOST_DEVICE

namespace fa {

// Threads per warp, on every architecture FlashLab targets (sm_80, sm_89, sm_90).
constexpr int kWarpSize = 32;

// The shared memory (static + dynamic) a CTA of any family may use: sm_90's opt-in limit per block, 227
// KiB, the largest target's (CUDA Programming Guide, compute capability 9.0). Every family's kernels
// assert they fit it; a smaller chip's own limit prunes a config after compiling.
constexpr int kMaxSharedBytesPerBlock = 227 * 1024;

}  // namespace fa
