#pragma once
// The GPU as measurements and runs are keyed in the database (db::GpuKey): name, compute capability, SMs,
// the driver release nvidia-smi prints (the API version when nvidia-smi does not answer) and the CUDA driver
// API version. fa-tune keys its measurements on it, fa-mutate its mutation runs.
#include "db/tuning_store.hpp"
#include "runtime/device.hpp"

namespace fl::device {

db::GpuKey gpu_key(runtime::DeviceInfo const& device);

}  // namespace fl::device
