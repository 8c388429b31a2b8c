#pragma once
// TMA descriptors (CUtensorMap) for the tensor copy engine, encoded on the host by the driver's
// cuTensorMapEncodeTiled (loaded with the rest of the driver API, never linked). One map views one
// (B, H, N, D) attention tensor as 4-D {D, N, H, B}, innermost first, with the tensor's own strides, and
// one box is a tile of `box_rows` rows x `box_columns` columns of one (batch, head) matrix: a box never
// crosses into the next head, rows past N read as zeros and are not written.
#include <array>
#include <cstdint>
#include <vector>

#include "runtime/driver_api.hpp"
#include "runtime/result.hpp"

namespace fl::runtime {

enum class TensorElement { bf16, fp16, byte };  // byte: FP8 codes (e4m3 / e5m2) as the copy engine sees them

struct AttentionTensorView {
  CUdeviceptr base = 0;
  TensorElement element = TensorElement::bf16;
  std::uint64_t batch = 0, heads = 0, rows = 0, head_dim = 0;
  std::uint64_t batch_stride = 0, head_stride = 0, row_stride = 0;  // in elements; D is contiguous
};

inline constexpr std::size_t kTensorMapBytes = 128;  // sizeof(CUtensorMap)

// The descriptor's bytes for tiles of box_rows x box_columns of `view`, swizzled with the box row's width
// (the layout wgmma's descriptors read): box_columns * element bytes must be 128 or 64 (128- or 64-byte
// swizzle), box_rows at most 256 (TMA's box limit). Fails, naming the value, for what TMA cannot address: a
// base not 16-byte aligned, a stride that is not a multiple of 16 bytes, dims or strides past TMA's limits,
// or a driver error.
Result<std::array<unsigned char, kTensorMapBytes>> encode_attention_tensor_map(
    DriverApi const& api, AttentionTensorView const& view, unsigned box_rows, unsigned box_columns);

// One map of a launch: the tensor viewed, and its box (box_columns * element bytes is the swizzle span).
struct TensorMapSpec {
  AttentionTensorView view;
  unsigned box_rows = 0, box_columns = 0;
};

// The maps' bytes, kTensorMapBytes each, concatenated in the order of `maps` (the order of the kernel's
// descriptor struct): the one loop over encode_attention_tensor_map that every TMA family's argument goes
// through. The first map that fails fails the whole argument, with its error.
Result<std::vector<unsigned char>> encode_tensor_maps(DriverApi const& api,
                                                      std::vector<TensorMapSpec> const& maps);

// Bytes of one element of `element`.
std::uint64_t element_bytes(TensorElement element);

}  // namespace fl::runtime
