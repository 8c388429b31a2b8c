#pragma once
// The precisions (element types) an attention implementation can claim: plain vocabulary that every layer
// names (a problem's dtype, a tensor's element type, a claimed precision). Rounding to them, their unit
// roundoff and range are numerics' emulation (numerics/precision.hpp). With them, how an FP8 dtype is scaled.
#include <optional>
#include <string_view>

namespace fl::common {

enum class Precision { fp32, fp16, bf16, fp8_e4m3, fp8_e5m2 };

bool is_fp8(Precision p);
// The precision values of a claimed one are stored in before a kernel reads them: the claimed one, bf16
// for FP8 claims (an FP8 kernel quantises bf16 inputs itself, and writes bf16 outputs).
Precision storage_precision(Precision claimed);

std::string_view name(Precision p);  // "fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"
std::optional<Precision> parse_precision(std::string_view text);

// How FP8 operands are scaled into their format: one factor per tensor, or one per block of rows of each
// (batch, head) matrix. Quantising is numerics' emulation (numerics/fp8_quantization.hpp) or a kernel's.
enum class Fp8Scaling { per_tensor, per_block };
std::string_view name(Fp8Scaling s);  // "per_tensor", "per_block"
std::optional<Fp8Scaling> parse_fp8_scaling(std::string_view text);
// Rows per scaling block for per-block FP8 scaling when nothing else is said (a kBlockN-sized tile).
constexpr int kDefaultFp8BlockRows = 64;

}  // namespace fl::common
