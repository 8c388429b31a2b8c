#include "numerics/fp8_variants.hpp"

namespace fl::numerics {

std::string_view name(Fp8Variant v) {
  switch (v) {
    case Fp8Variant::reverse_keys:
      return "reverse_keys";
    case Fp8Variant::block_p_scale:
      return "block_p_scale";
    case Fp8Variant::fp64_row_max:
      return "fp64_row_max";
    case Fp8Variant::rounded_p_sum:
      return "rounded_p_sum";
    case Fp8Variant::two_term_p:
      return "two_term_p";
    case Fp8Variant::two_term_q:
      return "two_term_q";
    case Fp8Variant::two_term_v:
      return "two_term_v";
    case Fp8Variant::bf16_pv:
      return "bf16_pv";
    case Fp8Variant::bf16_qk:
      return "bf16_qk";
    case Fp8Variant::rotate_v:
      return "rotate_v";
  }
  return "?";
}

std::string name(Fp8Variants set) {
  if (set.is_fa3()) return "fa3";
  std::string out;
  for (Fp8Variant v : kAllFp8Variants)
    if (set.has(v)) out += (out.empty() ? "" : "+") + std::string(name(v));
  return out;
}

std::optional<Fp8Variants> parse_fp8_variants(std::string_view text) {
  if (text == "fa3") return Fp8Variants{};
  Fp8Variants set;
  while (true) {
    std::size_t const plus = text.find('+');
    std::string_view const item = text.substr(0, plus);
    bool found = false;
    for (Fp8Variant v : kAllFp8Variants)
      if (name(v) == item && !set.has(v)) {
        set = set.with(v);
        found = true;
      }
    if (!found) return std::nullopt;
    if (plus == std::string_view::npos) return set;
    text.remove_prefix(plus + 1);
  }
}

std::string allowed_fp8_variant_names() {
  std::string out = "fa3";
  for (Fp8Variant v : kAllFp8Variants) out += ", " + std::string(name(v));
  return out;
}

}  // namespace fl::numerics
