#pragma once
// Inputs as the kernel holds them: values rounded to the claimed precision and, for FP8, quantised with a
// scale and carried with the descale factor the kernel multiplies back in fp32.
#include <cstddef>
#include <span>
#include <vector>

#include "numerics/precision.hpp"

namespace fl::numerics::emulator {

struct Operand {
  std::vector<float> values;       // rounded (16-bit) or quantised (fp8) values, same layout as the input
  std::vector<float> row_descale;  // one factor per row of head_dim values; 1 unless fp8
};

// 16-bit and fp32: round to the precision, descale 1. FP8: one scale per tensor, amax mapped onto the
// format's largest finite value (e4m3 448, e5m2 57344), as FlashAttention-3's per-tensor descale does.
Operand prepare_operand(Precision precision, std::span<float const> values, int head_dim);

}  // namespace fl::numerics::emulator
