#include <catch2/catch.hpp>

#include <cmath>

#include "numerics/precision.hpp"

using fl::common::Precision;
using fl::numerics::round_to;

TEST_CASE("rounding follows the device's round-to-nearest-even", "[numerics][precision]") {
  // 1 + 2^-11 lies exactly halfway between two fp16 neighbours: ties go to the even mantissa (1.0).
  CHECK(round_to(Precision::fp16, 1.0f + std::ldexp(1.0f, -11)) == 1.0f);
  // 1 + 3*2^-11 is halfway between 1+2^-10 and 1+2^-9: the even one is 1 + 2^-9.
  CHECK(round_to(Precision::fp16, 1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));
  CHECK(round_to(Precision::bf16, 1.0f + std::ldexp(1.0f, -8)) == 1.0f);
  CHECK(round_to(Precision::fp32, 0.1f) == 0.1f);
}

TEST_CASE("fp8 conversions saturate at the largest finite value", "[numerics][precision]") {
  CHECK(round_to(Precision::fp8_e4m3, 1e6f) == 448.0f);
  CHECK(round_to(Precision::fp8_e4m3, -1e6f) == -448.0f);
  CHECK(round_to(Precision::fp8_e5m2, 1e9f) == 57344.0f);
  CHECK(std::isnan(round_to(Precision::fp8_e4m3, std::nanf(""))));
  CHECK(fl::numerics::max_finite(Precision::fp8_e4m3) == 448.0);
}
