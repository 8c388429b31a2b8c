#include "runtime/tensor_map.hpp"

#include <catch2/catch.hpp>

#include "tests/support/recording_tensor_maps.hpp"

using namespace fl::runtime;
using fl::test::attention_map;
using fl::test::decode_tensor_maps;

namespace {

// (B, H, N, D) = (2, 4, 100, 128), contiguous.
AttentionTensorView contiguous(CUdeviceptr base, TensorElement element) {
  return {base, element, 2, 4, 100, 128, 4 * 100 * 128, 100 * 128, 128};
}

}  // namespace

TEST_CASE("encode_tensor_maps encodes each map as asked, in order", "[runtime]") {
  auto const api = fl::test::recording_driver_api();
  auto const bytes = encode_tensor_maps(
      api, {{contiguous(0x1000, TensorElement::bf16), 128, 64},
            {contiguous(0x2000, TensorElement::byte), 64, 64},  // FP8: 64 one-byte columns, 64-byte swizzle
            {contiguous(0x3000, TensorElement::fp16), 32, 64}});
  REQUIRE(bytes);
  REQUIRE(bytes->size() == 3 * kTensorMapBytes);
  auto const maps = decode_tensor_maps(*bytes);
  CHECK(maps[0] == attention_map(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 0x1000, {128, 100, 4, 2},
                                 {256, 100 * 256, 4 * 100 * 256}, 64, 128, CU_TENSOR_MAP_SWIZZLE_128B));
  CHECK(maps[1] == attention_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, 0x2000, {128, 100, 4, 2},
                                 {128, 100 * 128, 4 * 100 * 128}, 64, 64, CU_TENSOR_MAP_SWIZZLE_64B));
  CHECK(maps[2] == attention_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 0x3000, {128, 100, 4, 2},
                                 {256, 100 * 256, 4 * 100 * 256}, 64, 32, CU_TENSOR_MAP_SWIZZLE_128B));
}

TEST_CASE("encode_tensor_maps fails with the first map TMA cannot address", "[runtime]") {
  auto const api = fl::test::recording_driver_api();
  auto const bytes = encode_tensor_maps(api, {{contiguous(0x1000, TensorElement::bf16), 128, 64},
                                              {contiguous(0x2008, TensorElement::bf16), 128, 64}});
  REQUIRE_FALSE(bytes);
  CHECK(bytes.error().message.find("16-byte aligned") != std::string::npos);
  auto const too_wide = encode_tensor_maps(api, {{contiguous(0x1000, TensorElement::bf16), 128, 96}});
  REQUIRE_FALSE(too_wide);
  CHECK(too_wide.error().message.find("96 columns") != std::string::npos);
}

TEST_CASE("encode_tensor_maps of no maps is no bytes", "[runtime]") {
  auto const bytes = encode_tensor_maps(fl::test::recording_driver_api(), {});
  REQUIRE(bytes);
  CHECK(bytes->empty());
}
