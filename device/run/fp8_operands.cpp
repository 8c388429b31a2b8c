#include "device/run/fp8_operands.hpp"

#include <cuda_fp8.h>

namespace fl::device {

std::uint8_t fp8_code(float value, common::Precision format) {
  return __nv_cvt_float_to_fp8(value, __NV_SATFINITE,
                               format == common::Precision::fp8_e5m2 ? __NV_E5M2 : __NV_E4M3);
}

}  // namespace fl::device
