#pragma once
// The precisions (element types) an attention implementation can claim: plain vocabulary that every layer
// names (a problem's dtype, a tensor's element type, a claimed precision). Rounding to them, their unit
// roundoff and range are numerics' emulation (numerics/precision.hpp).
#include <optional>
#include <string_view>

namespace fl::common {

enum class Precision { fp32, fp16, bf16, fp8_e4m3, fp8_e5m2 };

bool is_fp8(Precision p);

std::string_view name(Precision p);  // "fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"
std::optional<Precision> parse_precision(std::string_view text);

}  // namespace fl::common
