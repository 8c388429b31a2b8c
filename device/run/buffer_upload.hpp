#pragma once
// Device buffers from host vectors, for the device problem's files (device_problem.cpp, fp8_upload.cpp):
// allocate, upload, point fa::AttentionParams at them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/precision.hpp"
#include "device/problem.hpp"
#include "device/run/host_tensors.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/result.hpp"

namespace fl::device::run_detail {

constexpr std::size_t kBytes16 = 2;  // one fp16 or bf16 element

template <class T>
T* as_pointer(runtime::DeviceBuffer const& b, std::size_t byte_offset = 0) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(b.ptr() + byte_offset));
}

// `values` encoded in the dtype's 16-bit storage (bf16 for FP8 dtypes), into an allocated buffer.
inline runtime::Status upload_16bit(runtime::DeviceBuffer& buffer, std::vector<float> const& values,
                                    common::Precision dtype) {
  auto const bits = encode_16bit(values, dtype);
  return buffer.upload(bits.data(), bits.size() * sizeof(std::uint16_t));
}

// Whether inputs.encoded holds this problem's encodings (its storage precision, bf16 for FP8; the right
// sizes): then uploads take them instead of converting again.
inline bool encoded_for(Problem const& problem, HostInputs const& inputs) {
  auto const* e = inputs.encoded.get();
  return e && e->dtype == common::storage_precision(problem.dtype) && e->q.size() == inputs.q.size() &&
         e->k.size() == inputs.k.size() && e->v.size() == inputs.v.size() &&
         e->d_o.size() == inputs.d_o.size();
}

inline runtime::Status upload_bits(runtime::DeviceBuffer& buffer, std::vector<std::uint16_t> const& bits) {
  return buffer.upload(bits.data(), bits.size() * sizeof(std::uint16_t));
}

template <class T>
runtime::Result<runtime::DeviceBuffer> upload_new(std::vector<T> const& values) {
  auto b = runtime::DeviceBuffer::allocate(values.size() * sizeof(T));
  if (!b) return b.error();
  if (auto st = b->upload(values.data(), values.size() * sizeof(T)); !st) return st.error();
  return std::move(b.value());
}

inline runtime::Status allocate_slot(std::optional<runtime::DeviceBuffer>& slot, std::size_t bytes) {
  auto b = runtime::DeviceBuffer::allocate(bytes);
  if (!b) return b.error();
  slot.emplace(std::move(b.value()));
  return {};
}

}  // namespace fl::device::run_detail
