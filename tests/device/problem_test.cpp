#include "device/problem.hpp"

#include <catch2/catch.hpp>

using namespace fl::device;
using fl::common::Precision;

TEST_CASE("FLOPs follow the FlashAttention convention", "[device]") {
  auto p = headline_problem(4096, 128, false, Precision::bf16, Direction::forward);
  CHECK(p.shape.batch == 4);
  CHECK(p.shape.heads_q == 16);
  CHECK(attention_flops(p) == Approx(4.0 * 4 * 16 * 4096.0 * 4096.0 * 128));
  p.shape.causal = true;
  CHECK(attention_flops(p) == Approx(2.0 * 4 * 16 * 4096.0 * 4096.0 * 128));
  p.direction = Direction::backward;
  CHECK(attention_flops(p) == Approx(2.5 * 2.0 * 4 * 16 * 4096.0 * 4096.0 * 128));
}

TEST_CASE("past n = 16384 the headline batch stays 1, never 0", "[device]") {
  auto const p = headline_problem(32768, 128, false, Precision::bf16, Direction::forward);
  CHECK(p.shape.batch == 1);
  CHECK(p.shape.heads_q == 16);
  CHECK(headline_batch(1024, 4096) == 4);  // fa-tune --tokens 4096
  CHECK(headline_batch(8192, 4096) == 1);
}

TEST_CASE("problems describe themselves in one line", "[device]") {
  auto const p = headline_problem(1024, 64, true, Precision::fp16, Direction::forward);
  CHECK(describe(p) == "b16 h32/32 n1024x1024 d64 fp16 causal fwd");
}

TEST_CASE("the dtype key names the FP8 recipe and reads back", "[device][fp8]") {
  auto p = headline_problem(4096, 128, false, Precision::fp8_e4m3, Direction::forward);
  CHECK(dtype_key(p) == "fp8_e4m3");
  p.fp8 = {fl::common::Fp8Scaling::per_block, 128, true, 0, true};
  CHECK(dtype_key(p) == "fp8_e4m3 per_block128 incoherent quantized_on_device");
  auto const back = parse_dtype_key(dtype_key(p));
  REQUIRE(back);
  CHECK(back->first == Precision::fp8_e4m3);
  CHECK(back->second.scaling == fl::common::Fp8Scaling::per_block);
  CHECK(back->second.block_rows == 128);
  CHECK(back->second.incoherent);
  CHECK(back->second.on_device);
  CHECK_FALSE(back->second.bf16_pv);
  p.fp8.on_device = false;
  p.fp8.bf16_pv = true;  // a different computation: never the same key as FP8 P V
  CHECK(dtype_key(p) == "fp8_e4m3 per_block128 incoherent bf16_pv");
  auto const pv = parse_dtype_key(dtype_key(p));
  REQUIRE(pv);
  CHECK(pv->second.bf16_pv);
  p.fp8.bf16_pv = false;
  p.fp8.pretransposed_v = true;  // a different timed sequence (no V transpose): its own key
  CHECK(dtype_key(p) == "fp8_e4m3 per_block128 incoherent pretransposed_v");
  auto const vt = parse_dtype_key(dtype_key(p));
  REQUIRE(vt);
  CHECK(vt->second.pretransposed_v);
  CHECK_FALSE(back->second.pretransposed_v);
  auto const plain = parse_dtype_key("fp8_e5m2");
  REQUIRE(plain);
  CHECK(plain->second.scaling == fl::common::Fp8Scaling::per_tensor);
  CHECK_FALSE(plain->second.incoherent);
  // The FP8 options are ignored by (and never keyed for) 16-bit dtypes.
  auto b = headline_problem(4096, 128, false, Precision::bf16, Direction::forward);
  b.fp8.incoherent = true;
  CHECK(dtype_key(b) == "bf16");
  for (char const* bad :
       {"bf16 incoherent", "fp8_e4m3 per_blockx", "fp8_e4m3 per_block", "fp4", "fp8_e4m3 fast"})
    CHECK_FALSE(parse_dtype_key(bad));
}
