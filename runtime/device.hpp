#pragma once
// What the GPU is (for cache keys, pruning and reports) and the RAII holder of its primary context.
#include <cstddef>
#include <string>

#include "runtime/driver_api.hpp"
#include "runtime/result.hpp"

namespace fl::runtime {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int driver_version = 0;                      // 13000 = CUDA 13.0
  std::size_t max_shared_per_block = 0;        // without opting in (48 KiB)
  std::size_t max_shared_per_block_optin = 0;  // with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  std::size_t shared_per_sm = 0;
  int max_threads_per_block = 0;
  int registers_per_sm = 0;
  std::size_t l2_bytes = 0;
  int clock_khz = 0;
  std::size_t memory_bytes = 0;

  int compute_capability() const { return 10 * cc_major + cc_minor; }  // 90 for 9.0
  // "NVIDIA H200|cc9.0|sm132|driver13000": what the cache keys of measurements name.
  std::string identity() const;
};

// Properties of device `ordinal`; fails with "no CUDA driver: ..." / "no CUDA device: ..." without one.
Result<DeviceInfo> query_device(int ordinal = 0);

// Retains the device's primary context and makes it current on the calling thread; releases it on
// destruction. Every driver object (module, buffer, event) needs it alive while they live.
class PrimaryContext {
 public:
  static Result<PrimaryContext> retain(int ordinal = 0);

  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  PrimaryContext(PrimaryContext const&) = delete;
  PrimaryContext& operator=(PrimaryContext const&) = delete;
  ~PrimaryContext();

  CUcontext get() const { return context_; }
  DeviceInfo const& info() const { return info_; }
  Status make_current() const;  // for another thread that uses this device
  Status synchronize() const;   // waits for all work of the context

 private:
  PrimaryContext(DriverApi const* api, CUdevice device, CUcontext context, DeviceInfo info);
  void release();

  DriverApi const* api_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  DeviceInfo info_;
};

// After a sticky error (illegal address, launch failure, ...) every call on the context fails. This destroys
// the primary context's state (allocations, modules: callers must drop theirs) with cuDevicePrimaryCtxReset,
// makes the fresh primary context current and checks it with a synchronize. An error when the device stays
// unusable: the process must then end (CUDA's documentation says so for sticky errors; whether a reset
// suffices depends on the driver, which the H200 run answers).
Status reset_primary_context(int ordinal);

}  // namespace fl::runtime
