#include "device/arch_limits.hpp"

namespace fl::device {

ArchLimits limits_for(runtime::DeviceInfo const& device) {
  ArchLimits limits;
  limits.max_shared_per_block_optin = device.max_shared_per_block_optin;
  limits.registers_per_sm = device.registers_per_sm;
  limits.max_threads_per_block = device.max_threads_per_block;
  return limits;
}

}  // namespace fl::device
