#include "tuner/families/tensor_maps.hpp"

#include <cstring>

#include "runtime/tensor_map.hpp"

namespace fl::tuner {

namespace {
constexpr int kColumnsPerBox = 64;  // 16-bit columns in one 128-byte swizzle span: the maps' inner box
}

runtime::Result<std::vector<unsigned char>> encode_tensor_maps(Problem const& problem,
                                                               std::vector<TensorMapSpec> const& tensors) {
  auto api = runtime::driver_api();
  if (!api) return api.error();
  auto const& s = problem.shape;
  runtime::TensorElement const element = problem.dtype == numerics::Precision::fp16
                                             ? runtime::TensorElement::fp16
                                             : runtime::TensorElement::bf16;
  std::vector<unsigned char> bytes(tensors.size() * runtime::kTensorMapBytes);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    auto const& t = tensors[i];
    runtime::AttentionTensorView const view{reinterpret_cast<CUdeviceptr>(t.base),
                                            element,
                                            std::uint64_t(s.batch),
                                            std::uint64_t(t.heads),
                                            std::uint64_t(t.rows),
                                            std::uint64_t(s.head_dim),
                                            std::uint64_t(t.batch_stride),
                                            std::uint64_t(t.head_stride),
                                            std::uint64_t(t.row_stride)};
    auto encoded = runtime::encode_attention_tensor_map(*api.value(), view, t.box_rows, kColumnsPerBox);
    if (!encoded) return encoded.error();
    std::memcpy(bytes.data() + i * runtime::kTensorMapBytes, encoded->data(), runtime::kTensorMapBytes);
  }
  return bytes;
}

}  // namespace fl::tuner
