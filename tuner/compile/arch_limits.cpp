#include "tuner/compile/arch_limits.hpp"

namespace fl::tuner {

namespace {
// Opt-in shared memory per block (CUDA Programming Guide, compute capability tables):
// 8.0: 163 KiB, 8.9: 99 KiB, 9.0: 227 KiB.
constexpr std::size_t kKiB = 1024;
constexpr std::size_t kSharedOptinSm80 = 163 * kKiB;
constexpr std::size_t kSharedOptinSm89 = 99 * kKiB;
constexpr std::size_t kSharedOptinSm90 = 227 * kKiB;
}  // namespace

ArchLimits limits_for(runtime::TargetArch arch) {
  ArchLimits limits;
  switch (arch) {
    case runtime::TargetArch::sm_80:
      limits.max_shared_per_block_optin = kSharedOptinSm80;
      break;
    case runtime::TargetArch::sm_89:
      limits.max_shared_per_block_optin = kSharedOptinSm89;
      break;
    case runtime::TargetArch::sm_90:
    case runtime::TargetArch::sm_90a:
      limits.max_shared_per_block_optin = kSharedOptinSm90;
      break;
  }
  return limits;
}

ArchLimits limits_for(runtime::DeviceInfo const& device) {
  ArchLimits limits;
  limits.max_shared_per_block_optin = device.max_shared_per_block_optin;
  limits.registers_per_sm = device.registers_per_sm;
  limits.max_threads_per_block = device.max_threads_per_block;
  return limits;
}

}  // namespace fl::tuner
