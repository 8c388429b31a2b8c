#pragma once
// fa2_sm80_bwd's tunables and the constraints between them (device/families/fa2_sm80_bwd.cpp mirrors them):
// shared by its dK/dV kernel (fa2_sm80_bwd.cu) and its dQ pass (fa2_sm80_bwd_dq.cuh).

#include "fa_arch.h"

namespace fa2bwd {

// Shared memory of the dK/dV kernel: K, V (kBlockN rows each), kStages x (Q, dO) tiles of kBlockM rows,
// in atomic dQ mode the dS^T tile (kBlockN x kBlockM, 16-bit), and kStages x (LSE, D) rows (fp32).
template <int kHeadDim, int kBlockM, int kBlockN, int kNWarps, int kStages, int kDqAtomic>
struct BwdConfig {
  static constexpr int kThreads = fa::kWarpSize * kNWarps;
  static constexpr int kRowBytes = kHeadDim * 2;
  static constexpr int kDT = kHeadDim / 8;
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256, "head dim 64, 128 or 256");
  static_assert(kNWarps == 4 || kNWarps == 8, "4 or 8 warps");
  static_assert(kBlockM % 16 == 0 && kBlockN % 16 == 0, "whole 16-wide k-steps");
  static_assert(kStages == 1 || kStages == 2, "Q/dO single or double buffered");
  static_assert(kDqAtomic == 0 || kDqAtomic == 1, "dQ by a separate pass (0) or by fp32 atomics (1)");
  static_assert((kBlockM * kHeadDim / 8) % kThreads == 0 && (kBlockN * kHeadDim / 8) % kThreads == 0,
                "tile copies split evenly over the threads");
  static_assert(kBlockM <= kThreads, "one thread per query row stages LSE and D");
  static constexpr int kTileBytes = 2 * kBlockN * kRowBytes + 2 * kStages * kBlockM * kRowBytes;
  static constexpr int kDsBytes = kDqAtomic ? kBlockN * kBlockM * 2 : 0;
  static constexpr int kSmemBytes = kTileBytes + kDsBytes + 2 * kStages * kBlockM * 4;
  static_assert(kSmemBytes <= fa::kMaxSharedBytesPerBlock, "shared memory per block");
};

}  // namespace fa2bwd
