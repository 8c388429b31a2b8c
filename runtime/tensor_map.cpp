#include "runtime/tensor_map.hpp"

#include <cstring>
#include <optional>
#include <string>

namespace fl::runtime {
namespace {

// TMA's own limits (CUDA driver API, cuTensorMapEncodeTiled): global address and strides 16-byte
// granular, strides below 2^40 bytes, every dimension at most 2^32, box sides at most 256 elements, and
// a box row of at most the swizzle span.
constexpr std::uint64_t kAddressAlignment = 16;
constexpr std::uint64_t kMaxStrideBytes = 1ull << 40;
constexpr std::uint64_t kMaxDim = 1ull << 32;
constexpr unsigned kMaxBoxSide = 256;

// The swizzle is the box row's width: 128 or 64 bytes (the spans the wgmma descriptors read).
std::optional<CUtensorMapSwizzle> swizzle_for_row_bytes(std::uint64_t row_bytes) {
  if (row_bytes == 128) return CU_TENSOR_MAP_SWIZZLE_128B;
  if (row_bytes == 64) return CU_TENSOR_MAP_SWIZZLE_64B;
  return std::nullopt;
}

Error tensor_map_error(std::string message) {
  return Error{"tensor map", std::move(message), ""};
}

CUtensorMapDataType data_type(TensorElement element) {
  switch (element) {
    case TensorElement::bf16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case TensorElement::fp16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case TensorElement::byte:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

}  // namespace

std::uint64_t element_bytes(TensorElement element) {
  return element == TensorElement::byte ? 1 : 2;
}

Result<std::array<unsigned char, kTensorMapBytes>> encode_attention_tensor_map(
    DriverApi const& api, AttentionTensorView const& view, unsigned box_rows, unsigned box_columns) {
  std::uint64_t const bytes = element_bytes(view.element);
  if (view.base % kAddressAlignment != 0)
    return tensor_map_error("tensor base address is not 16-byte aligned");
  if (box_rows == 0 || box_rows > kMaxBoxSide)
    return tensor_map_error("box of " + std::to_string(box_rows) + " rows (TMA allows 1 to 256)");
  auto const swizzle = swizzle_for_row_bytes(box_columns * bytes);
  if (!swizzle || box_columns > view.head_dim)
    return tensor_map_error(
        "box of " + std::to_string(box_columns) +
        " columns: one box row must be 64 or 128 bytes (the swizzle) and fit the head dim");
  std::uint64_t const dims[4] = {view.head_dim, view.rows, view.heads, view.batch};
  for (auto const d : dims)
    if (d == 0 || d > kMaxDim)
      return tensor_map_error("tensor dimension " + std::to_string(d) + " outside 1..2^32");
  std::uint64_t const strides[3] = {view.row_stride * bytes, view.head_stride * bytes,
                                    view.batch_stride * bytes};
  char const* const names[3] = {"row", "head", "batch"};
  for (int i = 0; i < 3; ++i)
    if (strides[i] % kAddressAlignment != 0 || strides[i] >= kMaxStrideBytes)
      return tensor_map_error(std::string(names[i]) + " stride of " + std::to_string(strides[i]) +
                              " bytes: TMA needs a multiple of 16 below 2^40");
  cuuint64_t global_dim[4], global_strides[3];
  for (int i = 0; i < 4; ++i) global_dim[i] = dims[i];
  for (int i = 0; i < 3; ++i) global_strides[i] = strides[i];
  cuuint32_t const box[4] = {box_columns, box_rows, 1, 1};
  cuuint32_t const element_strides[4] = {1, 1, 1, 1};
  CUtensorMap map;
  CUresult const code = api.cuTensorMapEncodeTiled(
      &map, data_type(view.element), 4, reinterpret_cast<void*>(view.base), global_dim, global_strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, *swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (code != CUDA_SUCCESS) return driver_error(api, code, "cuTensorMapEncodeTiled", "tensor map");
  std::array<unsigned char, kTensorMapBytes> out{};
  static_assert(sizeof(CUtensorMap) == kTensorMapBytes);
  std::memcpy(out.data(), &map, kTensorMapBytes);
  return out;
}

Result<std::vector<unsigned char>> encode_tensor_maps(DriverApi const& api,
                                                      std::vector<TensorMapSpec> const& maps) {
  std::vector<unsigned char> bytes(maps.size() * kTensorMapBytes);
  for (std::size_t i = 0; i < maps.size(); ++i) {
    auto encoded = encode_attention_tensor_map(api, maps[i].view, maps[i].box_rows, maps[i].box_columns);
    if (!encoded) return encoded.error();
    std::memcpy(bytes.data() + i * kTensorMapBytes, encoded->data(), kTensorMapBytes);
  }
  return bytes;
}

}  // namespace fl::runtime
