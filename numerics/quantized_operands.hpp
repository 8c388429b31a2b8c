#pragma once
// Q, K, V and dO as a low-precision kernel's matrix products consume them: rounded to fp16/bf16, or
// (FP8) optionally rotated by the incoherent transform, then scaled and quantised per tensor or per
// block, with one descale factor per row (the descale of the row's block). The value a kernel multiplies
// is values[i] * descale[row of i]. Shared by the untiled standard-attention emulation and the tiled
// emulator, so both start from the same operands.
#include <optional>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/incoherent_processing.hpp"
#include "numerics/precision_recipe.hpp"

namespace fl::numerics {

struct QuantizedOperands {
  common::AttentionShape shape;
  std::vector<float> q, k, v, d_o;                                  // same layouts as AttentionInputs
  std::vector<float> q_descale, k_descale, v_descale, d_o_descale;  // one per row (1 unless FP8)
  // Set when Q and K were rotated (FP8 with incoherent processing): gradients computed against the
  // rotated K or Q are rotated back with apply_incoherent_inverse.
  std::optional<IncoherentTransform> transform;
  // Set when V was rotated too (the rotate_v variant): O = (P V M) M^T, undone by the emulator's epilogue.
  std::optional<IncoherentTransform> v_transform;
};

QuantizedOperands quantize_operands(AttentionInputs const& in, PrecisionRecipe const& recipe);

}  // namespace fl::numerics
