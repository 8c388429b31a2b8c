#include "common/precision.hpp"

#include <array>
#include <utility>

namespace fl::common {

bool is_fp8(Precision p) {
  return p == Precision::fp8_e4m3 || p == Precision::fp8_e5m2;
}

Precision storage_precision(Precision claimed) {
  return is_fp8(claimed) ? Precision::bf16 : claimed;
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

std::string_view name(Fp8Scaling s) {
  return s == Fp8Scaling::per_tensor ? "per_tensor" : "per_block";
}

std::optional<Fp8Scaling> parse_fp8_scaling(std::string_view text) {
  if (text == "per_tensor") return Fp8Scaling::per_tensor;
  if (text == "per_block") return Fp8Scaling::per_block;
  return std::nullopt;
}

}  // namespace fl::common
