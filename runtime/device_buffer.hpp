#pragma once
// RAII device memory: allocate, upload, download, memset. Sizes are in bytes; the typed helpers take spans.
#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/driver_api.hpp"
#include "runtime/result.hpp"

namespace fl::runtime {

class DeviceBuffer {
 public:
  static Result<DeviceBuffer> allocate(std::size_t bytes);

  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(DeviceBuffer const&) = delete;
  DeviceBuffer& operator=(DeviceBuffer const&) = delete;
  ~DeviceBuffer();

  CUdeviceptr ptr() const { return pointer_; }  // pass this (by value) as a kernel's pointer parameter
  std::size_t bytes() const { return bytes_; }

  Status upload(void const* host, std::size_t bytes, std::size_t offset = 0);
  Status download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  Status copy_from(DeviceBuffer const& source, std::size_t bytes);
  Status fill_bytes(std::uint8_t value);
  Status fill_words(std::uint32_t value);  // bytes() must be a multiple of 4

  template <class T>
  Status upload(std::span<T const> host) {
    return upload(host.data(), host.size_bytes());
  }
  template <class T>
  Status download(std::span<T> host) const {
    return download(host.data(), host.size_bytes());
  }

 private:
  DeviceBuffer(DriverApi const* api, CUdeviceptr pointer, std::size_t bytes)
      : api_(api), pointer_(pointer), bytes_(bytes) {}
  Status check_range(std::size_t bytes, std::size_t offset, char const* what) const;
  void free();

  DriverApi const* api_ = nullptr;
  CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace fl::runtime
