#include <catch2/catch.hpp>

#include "common/precision.hpp"

using fl::common::Precision;

TEST_CASE("precision names round-trip", "[common][precision]") {
  for (auto p : {Precision::fp32, Precision::fp16, Precision::bf16, Precision::fp8_e4m3, Precision::fp8_e5m2})
    CHECK(fl::common::parse_precision(fl::common::name(p)) == p);
  CHECK_FALSE(fl::common::parse_precision("fp4").has_value());
}

TEST_CASE("only the two FP8 formats are FP8", "[common][precision]") {
  CHECK(fl::common::is_fp8(Precision::fp8_e4m3));
  CHECK(fl::common::is_fp8(Precision::fp8_e5m2));
  for (auto p : {Precision::fp32, Precision::fp16, Precision::bf16}) CHECK_FALSE(fl::common::is_fp8(p));
}
