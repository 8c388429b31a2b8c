#pragma once
// The architecture limits, in one table: per compute capability (NVIDIA's published figures, for pruning
// without a GPU; when a device is present its own figures, runtime::DeviceInfo, replace them) and the
// two that every family's host side computes with (the warp and the shared memory its kernels assert).
#include <cstddef>

#include "kernels_src/fa_arch.h"
#include "runtime/device.hpp"
#include "runtime/target_arch.hpp"

namespace fl::device {

struct ArchLimits {
  std::size_t max_shared_per_block_optin = 0;  // bytes, static + dynamic
  int registers_per_sm = 65536;
  int max_registers_per_thread = 255;
  int max_threads_per_block = 1024;
};

// Threads per warp, on every architecture FlashLab targets (kernels_src/fa_arch.h, which the kernels use).
inline constexpr int kWarpSize = fa::kWarpSize;

// Opt-in shared memory per block (CUDA Programming Guide, compute capability tables): 8.0: 163 KiB,
// 8.9: 99 KiB, 9.0: 227 KiB; the other limits are the same on all four targets.
constexpr ArchLimits limits_for(runtime::TargetArch arch) {
  constexpr std::size_t kKiB = 1024;
  ArchLimits limits;
  switch (arch) {
    case runtime::TargetArch::sm_80:
      limits.max_shared_per_block_optin = 163 * kKiB;
      break;
    case runtime::TargetArch::sm_89:
      limits.max_shared_per_block_optin = 99 * kKiB;
      break;
    case runtime::TargetArch::sm_90:
    case runtime::TargetArch::sm_90a:
      limits.max_shared_per_block_optin = 227 * kKiB;
      break;
  }
  return limits;
}
ArchLimits limits_for(runtime::DeviceInfo const& device);

// The shared memory every family's kernels assert they fit (kernels_src/fa_arch.h): sm_90's opt-in, the
// largest target's. A family refuses a config over it before compiling, on any target; on a smaller chip
// the device's own limit prunes it after compiling.
inline constexpr std::size_t kFamilyMaxSharedBytes = fa::kMaxSharedBytesPerBlock;
static_assert(kFamilyMaxSharedBytes == limits_for(runtime::TargetArch::sm_90).max_shared_per_block_optin,
              "the kernels' limit is sm_90's opt-in shared memory");
// What a family says of a config over it.
inline constexpr char kFamilySharedRefusal[] = "shared memory over 227 KiB";
static_assert(kFamilyMaxSharedBytes == 227 * 1024, "kFamilySharedRefusal names the limit");

}  // namespace fl::device
