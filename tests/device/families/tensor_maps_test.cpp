// The TMA families' tensor maps, pinned: the cuTensorMapEncodeTiled arguments recorded from the code as it
// stood before both families moved onto the one encoding loop (runtime::encode_tensor_maps, 2026-12-01:
// fa3_sm90 had its own loop), for 16-bit and FP8 (64-byte Q/K boxes at d64, the V^T view) forwards and a
// backward. A change to any map's element type, box, swizzle, dims or strides fails here.
#include "device/families/tensor_maps.hpp"

#include <catch2/catch.hpp>

#include "device/families/registry.hpp"
#include "tests/support/recording_tensor_maps.hpp"

using namespace fl::device;
using fl::common::Precision;
using fl::test::attention_map;
using fl::test::EncodedTensorMap;

namespace {

// b3 h8/2, n_q = n, n_k = n + 128; V with padded rows and heads so its strides differ from K's.
Problem problem_of(int n, int d, bool causal, Precision dtype, Direction direction) {
  Problem p({}, dtype, direction);
  p.shape.batch = 3;
  p.shape.heads_q = 8;
  p.shape.heads_kv = 2;
  p.shape.seqlen_q = n;
  p.shape.seqlen_k = n + 128;
  p.shape.head_dim = d;
  p.shape.causal = causal;
  return p;
}

fa::AttentionParams params_of(Problem const& p) {
  int const n = p.shape.seqlen_q, d = p.shape.head_dim;
  fa::AttentionParams params{};
  params.q = reinterpret_cast<void const*>(0x100000);
  params.k = reinterpret_cast<void const*>(0x200000);
  params.v = reinterpret_cast<void const*>(0x300000);
  params.o = reinterpret_cast<void*>(0x400000);
  params.d_o = reinterpret_cast<void const*>(0x500000);
  params.v_transposed = reinterpret_cast<void*>(0x600000);
  params.q_row_stride = params.o_row_stride = d;
  params.q_head_stride = params.o_head_stride = 1LL * n * d;
  params.q_batch_stride = params.o_batch_stride = 8LL * n * d;
  params.k_row_stride = d;
  params.k_head_stride = (n + 128) * 1LL * d;
  params.k_batch_stride = 2LL * (n + 128) * d;
  params.v_row_stride = d + 16;
  params.v_head_stride = (n + 128) * 1LL * (d + 16);
  params.v_batch_stride = 2 * params.v_head_stride + 256;
  return params;
}

std::vector<EncodedTensorMap> encoded(std::string_view family, Config const& config, Problem const& p) {
  auto const f = find_family(family);
  REQUIRE(f);
  REQUIRE_FALSE(f->unsupported(p));
  REQUIRE_FALSE(f->violates(config, p));
  auto const bytes = fl::runtime::encode_tensor_maps(fl::test::recording_driver_api(),
                                                     f->tensor_maps(config, p, params_of(p)));
  REQUIRE(bytes);
  return fl::test::decode_tensor_maps(*bytes);
}

constexpr auto kBf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
constexpr auto kFp16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
constexpr auto kByte = CU_TENSOR_MAP_DATA_TYPE_UINT8;
constexpr auto kSwizzle128 = CU_TENSOR_MAP_SWIZZLE_128B;
constexpr auto kSwizzle64 = CU_TENSOR_MAP_SWIZZLE_64B;

Config const kSmallFwd{{"kBlockN", 64},    {"kConsumers", 1}, {"kIntraWgOverlap", 0},
                       {"kPersistent", 0}, {"kPingPong", 0},  {"kStages", 2}};

}  // namespace

TEST_CASE("fa3_sm90 bf16 maps: Q, K, V, O boxes of 64 columns, 128-byte swizzle", "[device]") {
  auto const maps =
      encoded("fa3_sm90", kSmallFwd, problem_of(1000, 64, false, Precision::bf16, Direction::forward));
  REQUIRE(maps.size() == 4);
  CHECK(maps[0] ==
        attention_map(kBf16, 0x100000, {64, 1000, 8, 3}, {0x80, 0x1f400, 0xfa000}, 64, 64, kSwizzle128));
  CHECK(maps[1] ==
        attention_map(kBf16, 0x200000, {64, 1128, 2, 3}, {0x80, 0x23400, 0x46800}, 64, 64, kSwizzle128));
  CHECK(maps[2] ==
        attention_map(kBf16, 0x300000, {64, 1128, 2, 3}, {0xa0, 0x2c100, 0x58400}, 64, 64, kSwizzle128));
  CHECK(maps[3] ==
        attention_map(kBf16, 0x400000, {64, 1000, 8, 3}, {0x80, 0x1f400, 0xfa000}, 64, 64, kSwizzle128));
}

TEST_CASE("fa3_sm90 FP8 d64 maps: 64-byte Q/K boxes, V^T padded to 128 keys, bf16 O", "[device]") {
  auto const maps =
      encoded("fa3_sm90", kSmallFwd, problem_of(1000, 64, false, Precision::fp8_e4m3, Direction::forward));
  REQUIRE(maps.size() == 4);
  CHECK(maps[0] ==
        attention_map(kByte, 0x100000, {64, 1000, 8, 3}, {0x40, 0xfa00, 0x7d000}, 64, 64, kSwizzle64));
  CHECK(maps[1] ==
        attention_map(kByte, 0x200000, {64, 1128, 2, 3}, {0x40, 0x11a00, 0x23400}, 64, 64, kSwizzle64));
  // V^T (B, H_kv, D, keys): 1128 keys padded to 1152, boxes of D rows x kBlockN keys.
  CHECK(maps[2] ==
        attention_map(kByte, 0x600000, {1152, 64, 2, 3}, {0x480, 0x12000, 0x24000}, 64, 64, kSwizzle64));
  CHECK(maps[3] ==
        attention_map(kBf16, 0x400000, {64, 1000, 8, 3}, {0x80, 0x1f400, 0xfa000}, 64, 64, kSwizzle128));
}

TEST_CASE("fa3_sm90 FP8 d128 maps: 128-byte boxes, V^T boxes of 128 keys", "[device]") {
  Config c = kSmallFwd;
  c["kBlockN"] = 128;
  c["kConsumers"] = 2;
  auto const maps =
      encoded("fa3_sm90", c, problem_of(4096, 128, true, Precision::fp8_e5m2, Direction::forward));
  REQUIRE(maps.size() == 4);
  CHECK(maps[0] ==
        attention_map(kByte, 0x100000, {128, 4096, 8, 3}, {0x80, 0x80000, 0x400000}, 128, 128, kSwizzle128));
  CHECK(maps[1] ==
        attention_map(kByte, 0x200000, {128, 4224, 2, 3}, {0x80, 0x84000, 0x108000}, 128, 128, kSwizzle128));
  CHECK(maps[2] == attention_map(kByte, 0x600000, {4224, 128, 2, 3}, {0x1080, 0x84000, 0x108000}, 128, 128,
                                 kSwizzle128));
  CHECK(maps[3] ==
        attention_map(kBf16, 0x400000, {128, 4096, 8, 3}, {0x100, 0x100000, 0x800000}, 64, 64, kSwizzle128));
}

TEST_CASE("fa3_sm90_bwd fp16 maps: Q, K, V, dO (with O's strides)", "[device]") {
  Config const c{{"kBlockM", 64}, {"kBlockN", 64}, {"kConsumers", 1}, {"kDqMode", 0}, {"kStages", 1}};
  auto const maps =
      encoded("fa3_sm90_bwd", c, problem_of(4096, 128, true, Precision::fp16, Direction::backward));
  REQUIRE(maps.size() == 4);
  CHECK(maps[0] ==
        attention_map(kFp16, 0x100000, {128, 4096, 8, 3}, {0x100, 0x100000, 0x800000}, 64, 64, kSwizzle128));
  CHECK(maps[1] ==
        attention_map(kFp16, 0x200000, {128, 4224, 2, 3}, {0x100, 0x108000, 0x210000}, 64, 64, kSwizzle128));
  CHECK(maps[2] ==
        attention_map(kFp16, 0x300000, {128, 4224, 2, 3}, {0x120, 0x129000, 0x252200}, 64, 64, kSwizzle128));
  CHECK(maps[3] ==
        attention_map(kFp16, 0x500000, {128, 4096, 8, 3}, {0x100, 0x100000, 0x800000}, 64, 64, kSwizzle128));
}

TEST_CASE("a family without TMA has no maps and an empty argument, without asking the driver", "[device]") {
  auto const f = find_family("fa2_sm80");
  REQUIRE(f);
  auto const p = problem_of(1000, 64, false, Precision::bf16, Direction::forward);
  auto const c = f->default_config(p);
  CHECK(f->tensor_maps(c, p, params_of(p)).empty());
  auto const bytes = f->tma_argument(c, p, params_of(p));
  REQUIRE(bytes);  // this machine may have no driver: an empty argument must not need one
  CHECK(bytes->empty());
}
