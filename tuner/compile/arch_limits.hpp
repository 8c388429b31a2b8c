#pragma once
// Per-architecture resource limits for pruning without a GPU. When a device is present its own figures
// (runtime::DeviceInfo) replace these; the values are NVIDIA's published limits per compute capability.
#include <cstddef>

#include "runtime/device.hpp"
#include "runtime/target_arch.hpp"

namespace fl::tuner {

struct ArchLimits {
  std::size_t max_shared_per_block_optin = 0;  // bytes, static + dynamic
  int registers_per_sm = 65536;
  int max_registers_per_thread = 255;
  int max_threads_per_block = 1024;
};

ArchLimits limits_for(runtime::TargetArch arch);
ArchLimits limits_for(runtime::DeviceInfo const& device);

}  // namespace fl::tuner
