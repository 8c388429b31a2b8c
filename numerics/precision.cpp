#include "numerics/precision.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <array>
#include <cmath>
#include <limits>

namespace fl::numerics {

float round_to(Precision p, float x) {
  switch (p) {
    case Precision::fp32:
      return x;
    case Precision::fp16:
      return __half2float(__float2half_rn(x));
    case Precision::bf16:
      return __bfloat162float(__float2bfloat16_rn(x));
    case Precision::fp8_e4m3: {
      __nv_fp8_storage_t bits = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(bits, __NV_E4M3)));
    }
    case Precision::fp8_e5m2: {
      __nv_fp8_storage_t bits = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(bits, __NV_E5M2)));
    }
  }
  return x;
}

void round_in_place(Precision p, std::span<float> values) {
  if (p == Precision::fp32) return;
  for (float& v : values) v = round_to(p, v);
}

double unit_roundoff(Precision p) {
  switch (p) {
    case Precision::fp32:
      return std::ldexp(1.0, -24);
    case Precision::fp16:
      return std::ldexp(1.0, -11);
    case Precision::bf16:
      return std::ldexp(1.0, -8);
    case Precision::fp8_e4m3:
      return std::ldexp(1.0, -4);
    case Precision::fp8_e5m2:
      return std::ldexp(1.0, -3);
  }
  return 0.0;
}

double max_finite(Precision p) {
  switch (p) {
    case Precision::fp32:
      return static_cast<double>(std::numeric_limits<float>::max());
    case Precision::fp16:
      return 65504.0;
    case Precision::bf16:
      return 3.3895313892515355e38;
    case Precision::fp8_e4m3:
      return 448.0;
    case Precision::fp8_e5m2:
      return 57344.0;
  }
  return 0.0;
}

bool is_fp8(Precision p) {
  return p == Precision::fp8_e4m3 || p == Precision::fp8_e5m2;
}

namespace {
constexpr std::array<std::pair<Precision, std::string_view>, 5> kNames{{
    {Precision::fp32, "fp32"},
    {Precision::fp16, "fp16"},
    {Precision::bf16, "bf16"},
    {Precision::fp8_e4m3, "fp8_e4m3"},
    {Precision::fp8_e5m2, "fp8_e5m2"},
}};
}  // namespace

std::string_view name(Precision p) {
  for (auto const& [value, text] : kNames)
    if (value == p) return text;
  return "unknown";
}

std::optional<Precision> parse_precision(std::string_view text) {
  for (auto const& [value, name_text] : kNames)
    if (name_text == text) return value;
  return std::nullopt;
}

}  // namespace fl::numerics
