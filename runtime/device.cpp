#include "runtime/device.hpp"

#include <array>
#include <optional>
#include <utility>

namespace fl::runtime {
namespace {

constexpr std::size_t kDeviceNameCapacity = 256;

struct AttributeReader {
  DriverApi const& api;
  CUdevice device;
  std::optional<Error> error;

  int operator()(CUdevice_attribute attribute, char const* what) {
    int value = 0;
    if (error) return 0;
    if (CUresult rc = api.cuDeviceGetAttribute(&value, attribute, device); rc != CUDA_SUCCESS) {
      error = driver_error(api, rc, std::string("cuDeviceGetAttribute(") + what + ")", "device");
    }
    return value;
  }
};

std::size_t as_size(int value) {
  return static_cast<std::size_t>(value);
}

}  // namespace

std::string DeviceInfo::identity() const {
  return name + "|cc" + std::to_string(cc_major) + "." + std::to_string(cc_minor) + "|sm" +
         std::to_string(sm_count) + "|driver" + std::to_string(driver_version);
}

Result<DeviceInfo> query_device(int ordinal) {
  auto loaded = driver_api();
  if (!loaded.ok()) return loaded.error();
  DriverApi const& api = *loaded.value();
  if (ordinal < 0 || ordinal >= api.device_count) {
    return Error{"device",
                 "no CUDA device: ordinal " + std::to_string(ordinal) + " requested, the driver reports " +
                     std::to_string(api.device_count),
                 ""};
  }
  CUdevice device = 0;
  if (CUresult rc = api.cuDeviceGet(&device, ordinal); rc != CUDA_SUCCESS) {
    return driver_error(api, rc, "cuDeviceGet", "device");
  }
  DeviceInfo info;
  info.ordinal = ordinal;
  info.driver_version = api.driver_version;
  std::array<char, kDeviceNameCapacity> name{};
  if (CUresult rc = api.cuDeviceGetName(name.data(), static_cast<int>(name.size()), device);
      rc != CUDA_SUCCESS) {
    return driver_error(api, rc, "cuDeviceGetName", "device");
  }
  info.name = name.data();
  std::size_t memory = 0;
  if (CUresult rc = api.cuDeviceTotalMem(&memory, device); rc != CUDA_SUCCESS) {
    return driver_error(api, rc, "cuDeviceTotalMem", "device");
  }
  info.memory_bytes = memory;

  AttributeReader read{api, device, std::nullopt};
  info.cc_major = read(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability major");
  info.cc_minor = read(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability minor");
  info.sm_count = read(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count");
  info.max_shared_per_block =
      as_size(read(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared per block"));
  info.max_shared_per_block_optin =
      as_size(read(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared per block opt-in"));
  info.shared_per_sm =
      as_size(read(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared per SM"));
  info.max_threads_per_block = read(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block");
  info.registers_per_sm = read(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, "registers per SM");
  info.l2_bytes = as_size(read(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size"));
  info.clock_khz = read(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock rate");
  if (read.error) return *read.error;
  return info;
}

PrimaryContext::PrimaryContext(DriverApi const* api, CUdevice device, CUcontext context, DeviceInfo info)
    : api_(api), device_(device), context_(context), info_(std::move(info)) {}

Result<PrimaryContext> PrimaryContext::retain(int ordinal) {
  auto info = query_device(ordinal);
  if (!info.ok()) return info.error();
  DriverApi const& api = *driver_api().value();
  CUdevice device = 0;
  if (CUresult rc = api.cuDeviceGet(&device, ordinal); rc != CUDA_SUCCESS) {
    return driver_error(api, rc, "cuDeviceGet", "device");
  }
  CUcontext context = nullptr;
  if (CUresult rc = api.cuDevicePrimaryCtxRetain(&context, device); rc != CUDA_SUCCESS) {
    return driver_error(api, rc, "cuDevicePrimaryCtxRetain", "device");
  }
  PrimaryContext held(&api, device, context, std::move(info).value());
  if (auto current = held.make_current(); !current.ok()) return current.error();
  return held;
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)),
      device_(other.device_),
      context_(std::exchange(other.context_, nullptr)),
      info_(std::move(other.info_)) {}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    release();
    api_ = std::exchange(other.api_, nullptr);
    device_ = other.device_;
    context_ = std::exchange(other.context_, nullptr);
    info_ = std::move(other.info_);
  }
  return *this;
}

PrimaryContext::~PrimaryContext() {
  release();
}

void PrimaryContext::release() {
  if (context_ == nullptr) return;
  api_->cuDevicePrimaryCtxRelease(device_);
  context_ = nullptr;
}

Status reset_primary_context(int ordinal) {
  auto api_result = driver_api();
  if (!api_result.ok()) return api_result.error();
  DriverApi const& api = *api_result.value();
  CUdevice device = 0;
  if (auto s = check_driver(api, api.cuDeviceGet(&device, ordinal), "cuDeviceGet", "device"); !s.ok())
    return s;
  if (auto s = check_driver(api, api.cuDevicePrimaryCtxReset(device), "cuDevicePrimaryCtxReset", "device");
      !s.ok())
    return s;
  CUcontext context = nullptr;
  if (auto s = check_driver(api, api.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain",
                            "device");
      !s.ok())
    return s;
  auto status = check_driver(api, api.cuCtxSetCurrent(context), "cuCtxSetCurrent", "device");
  if (status.ok()) status = check_driver(api, api.cuCtxSynchronize(), "cuCtxSynchronize", "device");
  // The caller's own retain keeps the context alive; this one only made it current.
  api.cuDevicePrimaryCtxRelease(device);
  return status;
}

Status PrimaryContext::make_current() const {
  return check_driver(*api_, api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent", "device");
}

Status PrimaryContext::synchronize() const {
  return check_driver(*api_, api_->cuCtxSynchronize(), "cuCtxSynchronize", "device");
}

}  // namespace fl::runtime
