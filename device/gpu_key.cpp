#include "device/gpu_key.hpp"

#include <string>

#include "device/gpu_telemetry.hpp"

namespace fl::device {

db::GpuKey gpu_key(runtime::DeviceInfo const& device) {
  auto const release = read_driver_release(device.ordinal);
  return db::GpuKey{device.name,
                    device.cc_major,
                    device.cc_minor,
                    device.sm_count,
                    release.value_or(std::to_string(device.driver_version)),
                    device.driver_version};
}

}  // namespace fl::device
