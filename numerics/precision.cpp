#include "numerics/precision.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <limits>

namespace fl::numerics {

float round_to(common::Precision p, float x) {
  switch (p) {
    case common::Precision::fp32:
      return x;
    case common::Precision::fp16:
      return __half2float(__float2half_rn(x));
    case common::Precision::bf16:
      return __bfloat162float(__float2bfloat16_rn(x));
    case common::Precision::fp8_e4m3: {
      __nv_fp8_storage_t bits = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(bits, __NV_E4M3)));
    }
    case common::Precision::fp8_e5m2: {
      __nv_fp8_storage_t bits = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(bits, __NV_E5M2)));
    }
  }
  return x;
}

void round_in_place(common::Precision p, std::span<float> values) {
  if (p == common::Precision::fp32) return;
  for (float& v : values) v = round_to(p, v);
}

double unit_roundoff(common::Precision p) {
  switch (p) {
    case common::Precision::fp32:
      return std::ldexp(1.0, -24);
    case common::Precision::fp16:
      return std::ldexp(1.0, -11);
    case common::Precision::bf16:
      return std::ldexp(1.0, -8);
    case common::Precision::fp8_e4m3:
      return std::ldexp(1.0, -4);
    case common::Precision::fp8_e5m2:
      return std::ldexp(1.0, -3);
  }
  return 0.0;
}

double max_finite(common::Precision p) {
  switch (p) {
    case common::Precision::fp32:
      return static_cast<double>(std::numeric_limits<float>::max());
    case common::Precision::fp16:
      return 65504.0;
    case common::Precision::bf16:
      return 3.3895313892515355e38;
    case common::Precision::fp8_e4m3:
      return 448.0;
    case common::Precision::fp8_e5m2:
      return 57344.0;
  }
  return 0.0;
}

}  // namespace fl::numerics
