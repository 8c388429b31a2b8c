#include "runtime/device_buffer.hpp"

#include <string>
#include <utility>

namespace fl::runtime {

Result<DeviceBuffer> DeviceBuffer::allocate(std::size_t bytes) {
  auto loaded = driver_api();
  if (!loaded.ok()) return loaded.error();
  DriverApi const* api = loaded.value();
  CUdeviceptr pointer = 0;
  if (bytes > 0) {
    if (CUresult rc = api->cuMemAlloc(&pointer, bytes); rc != CUDA_SUCCESS) {
      return driver_error(*api, rc, "cuMemAlloc(" + std::to_string(bytes) + " bytes)", "memory");
    }
  }
  return DeviceBuffer(api, pointer, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)),
      pointer_(std::exchange(other.pointer_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    free();
    api_ = std::exchange(other.api_, nullptr);
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { free(); }

void DeviceBuffer::free() {
  if (pointer_ == 0) return;
  api_->cuMemFree(pointer_);
  pointer_ = 0;
}

Status DeviceBuffer::check_range(std::size_t bytes, std::size_t offset, char const* what) const {
  if (offset > bytes_ || bytes > bytes_ - offset) {
    return Error{"memory",
                 std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                     " overruns a buffer of " + std::to_string(bytes_),
                 ""};
  }
  return {};
}

Status DeviceBuffer::upload(void const* host, std::size_t bytes, std::size_t offset) {
  if (auto range = check_range(bytes, offset, "upload"); !range.ok()) return range;
  if (bytes == 0) return {};
  return check_driver(*api_, api_->cuMemcpyHtoD(pointer_ + offset, host, bytes), "cuMemcpyHtoD", "memory");
}

Status DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (auto range = check_range(bytes, offset, "download"); !range.ok()) return range;
  if (bytes == 0) return {};
  return check_driver(*api_, api_->cuMemcpyDtoH(host, pointer_ + offset, bytes), "cuMemcpyDtoH", "memory");
}

Status DeviceBuffer::copy_from(DeviceBuffer const& source, std::size_t bytes) {
  if (auto range = check_range(bytes, 0, "copy"); !range.ok()) return range;
  if (auto range = source.check_range(bytes, 0, "copy"); !range.ok()) return range;
  if (bytes == 0) return {};
  return check_driver(*api_, api_->cuMemcpyDtoD(pointer_, source.pointer_, bytes), "cuMemcpyDtoD", "memory");
}

Status DeviceBuffer::fill_bytes(std::uint8_t value) {
  if (bytes_ == 0) return {};
  return check_driver(*api_, api_->cuMemsetD8(pointer_, value, bytes_), "cuMemsetD8", "memory");
}

Status DeviceBuffer::fill_words(std::uint32_t value) {
  constexpr std::size_t kWordBytes = 4;
  if (bytes_ % kWordBytes != 0) {
    return Error{"memory", "fill_words on a buffer of " + std::to_string(bytes_) + " bytes (not a multiple of 4)", ""};
  }
  if (bytes_ == 0) return {};
  return check_driver(*api_, api_->cuMemsetD32(pointer_, value, bytes_ / kWordBytes), "cuMemsetD32", "memory");
}

}  // namespace fl::runtime
