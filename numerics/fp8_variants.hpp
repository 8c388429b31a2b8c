#pragma once
// What an FP8 forward may do beyond FlashAttention-3's recipe (e4m3 Q, K, V scaled per block, the
// Hadamard rotation, P = exp2(s - m_running + 8) in e4m3, key blocks first to last): each variant is one
// named option of the recipe (PrecisionRecipe::fp8_variants), implemented at one place in the emulator
// (numerics/emulator/: fold_row and the FA-2 key loop for P, quantize_operands for the operands) and
// measured by fa-fp8-report (experiments/fp8_error_analysis, which states what each costs a kernel).
// Variants combine ("two_term_q+two_term_v"); the empty set is "fa3". Forward only, FA-2 loop order only;
// the tolerance model bounds fa3 (fa-check never claims a variant).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fl::numerics {

enum class Fp8Variant {
  reverse_keys,   // key blocks walked last to first, the same static 2^8 P scale (arXiv 2606.06521)
  block_p_scale,  // a power-of-two P scale per (row, key block): the block's largest weight in (2^7, 2^8]
  fp64_row_max,   // the row max and the exponent s - m in float64 (a control: fp32 already loses nothing)
  rounded_p_sum,  // l summed from the rounded P that P.V multiplies, not from P before rounding
  two_term_p,     // P = hi + lo/2^4, both e4m3, two P.V products: ~7 mantissa bits of P
  two_term_q,     // Q = hi + lo/2^4, both e4m3, two Q.K products: Q's rounding error ~2^-8
  two_term_v,     // V = hi + lo/2^4, both e4m3, two P.V products: V's rounding error ~2^-8
  bf16_pv,        // P and V in bf16 for P.V (the second product at the 16-bit rate); Q.K in FP8
  bf16_qk,        // Q and K in bf16 for Q.K (the first product at the 16-bit rate); P.V in FP8
  rotate_v,       // V rotated by the incoherent transform too (V M), O = (P V M) M^T un-rotated in fp32
                  // before its bf16 rounding (a Hadamard of each O row in the epilogue)
};
inline constexpr Fp8Variant kAllFp8Variants[] = {
    Fp8Variant::reverse_keys, Fp8Variant::block_p_scale, Fp8Variant::fp64_row_max, Fp8Variant::rounded_p_sum,
    Fp8Variant::two_term_p,   Fp8Variant::two_term_q,    Fp8Variant::two_term_v,   Fp8Variant::bf16_pv,
    Fp8Variant::bf16_qk,      Fp8Variant::rotate_v};
std::string_view name(Fp8Variant v);  // "reverse_keys", ...

// A set of variants; empty = FlashAttention-3's recipe.
struct Fp8Variants {
  std::uint32_t bits = 0;
  bool has(Fp8Variant v) const { return (bits >> unsigned(v)) & 1u; }
  Fp8Variants with(Fp8Variant v) const { return {bits | (1u << unsigned(v))}; }
  bool is_fa3() const { return bits == 0; }
  bool operator==(Fp8Variants const&) const = default;
};
std::string name(Fp8Variants v);  // "fa3", "two_term_q+two_term_v" (in kAllFp8Variants order)
// "fa3", or names joined by '+'; nullopt for an unknown or repeated name.
std::optional<Fp8Variants> parse_fp8_variants(std::string_view text);
std::string allowed_fp8_variant_names();  // "fa3, reverse_keys, ..." for error messages

// two_term_*: the low term is scaled by this before its own e4m3 rounding, so it uses e4m3's range as the
// high term does (the residual of a rounding to e4m3 is at most 2^-4 of the value); the products of the low
// tensor are scaled back by its inverse (a power of two: exact).
inline constexpr double kTwoTermLowScale = 16.0;
// block_p_scale: the largest shift, in powers of two, of one block's P scale over the running max's. A block
// 2^-64 below the row max adds nothing at fp32's precision, and the bound keeps 2^shift far from fp32's
// range when a kernel folds the shift into the accumulator's rescale.
inline constexpr int kMaxBlockPShift = 64;

}  // namespace fl::numerics
