#pragma once
// Rounding to the precisions an attention implementation can claim (common/precision.hpp names them) exactly
// as the GPU does, and their unit roundoff and range.
//
// Rounding goes through the host conversions of CUDA's own headers (cuda_fp16.h, cuda_bf16.h,
// cuda_fp8.h), never hand-written bit tricks, so the emulator and the tolerance model round the same
// way as __float2half_rn, __float2bfloat16_rn and the saturating __nv_cvt_float_to_fp8 on the device.
#include <span>

#include "common/precision.hpp"

namespace fl::numerics {

// Round-to-nearest-even into `p` and back to float. FP8 conversions saturate to the largest finite
// value (e4m3: 448, e5m2: 57344), as __NV_SATFINITE does; NaN stays NaN.
float round_to(common::Precision p, float x);
void round_in_place(common::Precision p, std::span<float> values);

// Unit roundoff u = 2^-(mantissa bits + 1): fp32 2^-24, fp16 2^-11, bf16 2^-8, e4m3 2^-4, e5m2 2^-3.
double unit_roundoff(common::Precision p);
// Largest finite value: fp16 65504, bf16 ~3.39e38, e4m3 448, e5m2 57344, fp32 ~3.40e38.
double max_finite(common::Precision p);

}  // namespace fl::numerics
