#pragma once
// A stand-in for the driver's cuTensorMapEncodeTiled that writes the arguments it was called with into
// the map it "encodes", so that a test without a GPU reads back exactly what each tensor map asked TMA
// for: element type, address, dims, strides, box, swizzle. Used through a DriverApi whose only entry
// point is this one (runtime::encode_tensor_maps takes the api as a parameter).
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/driver_api.hpp"
#include "runtime/tensor_map.hpp"

namespace fl::test {

// One call's arguments (rank 4, as every attention map is); fits the map's 128 bytes.
struct EncodedTensorMap {
  CUtensorMapDataType data_type{};
  std::uint32_t rank = 0;
  std::uint64_t address = 0;
  std::array<std::uint64_t, 4> dims{};          // {D, N, H, B}, innermost first
  std::array<std::uint64_t, 3> stride_bytes{};  // row, head, batch
  std::array<std::uint32_t, 4> box{};           // {columns, rows, 1, 1}
  std::array<std::uint32_t, 4> element_strides{};
  CUtensorMapInterleave interleave{};
  CUtensorMapSwizzle swizzle{};
  CUtensorMapL2promotion l2_promotion{};
  CUtensorMapFloatOOBfill oob_fill{};
  bool operator==(EncodedTensorMap const&) const = default;
};
static_assert(sizeof(EncodedTensorMap) <= runtime::kTensorMapBytes);

inline runtime::DriverApi recording_driver_api() {
  runtime::DriverApi api;
  api.cuTensorMapEncodeTiled = [](CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                  cuuint64_t const* dims, cuuint64_t const* strides, cuuint32_t const* box,
                                  cuuint32_t const* element_strides, CUtensorMapInterleave interleave,
                                  CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                  CUtensorMapFloatOOBfill oob) -> CUresult {
    if (rank != 4) return CUDA_ERROR_INVALID_VALUE;
    EncodedTensorMap e;
    e.data_type = type;
    e.rank = rank;
    e.address = reinterpret_cast<std::uintptr_t>(address);
    for (int i = 0; i < 4; ++i) {
      e.dims[i] = dims[i];
      e.box[i] = box[i];
      e.element_strides[i] = element_strides[i];
    }
    for (int i = 0; i < 3; ++i) e.stride_bytes[i] = strides[i];
    e.interleave = interleave;
    e.swizzle = swizzle;
    e.l2_promotion = l2;
    e.oob_fill = oob;
    std::memset(map, 0, sizeof(CUtensorMap));
    std::memcpy(map, &e, sizeof e);
    return CUDA_SUCCESS;
  };
  return api;
}

// The recorded calls behind an argument's bytes, one per 128-byte map.
inline std::vector<EncodedTensorMap> decode_tensor_maps(std::vector<unsigned char> const& bytes) {
  std::vector<EncodedTensorMap> out(bytes.size() / runtime::kTensorMapBytes);
  for (std::size_t i = 0; i < out.size(); ++i)
    std::memcpy(&out[i], bytes.data() + i * runtime::kTensorMapBytes, sizeof(EncodedTensorMap));
  return out;
}

// The map every attention tensor gets but for what differs: 4-D, unit element strides, no interleave,
// 256-byte L2 promotion, out-of-bounds reads as zeros.
inline EncodedTensorMap attention_map(CUtensorMapDataType type, std::uint64_t address,
                                      std::array<std::uint64_t, 4> dims, std::array<std::uint64_t, 3> strides,
                                      std::uint32_t box_columns, std::uint32_t box_rows,
                                      CUtensorMapSwizzle swizzle) {
  EncodedTensorMap e;
  e.data_type = type;
  e.rank = 4;
  e.address = address;
  e.dims = dims;
  e.stride_bytes = strides;
  e.box = {box_columns, box_rows, 1, 1};
  e.element_strides = {1, 1, 1, 1};
  e.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  e.swizzle = swizzle;
  e.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  e.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  return e;
}

}  // namespace fl::test
