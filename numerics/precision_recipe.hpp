#pragma once
// What a correct attention kernel rounds, and to what, when it claims a precision. The low-precision
// emulations (standard attention here, the tiled emulator in numerics/emulator/) and the tolerance model
// all read the same recipe, so the bound describes exactly the arithmetic that is emulated.
//
//   claimed    operands (Q,K,V,dO)   P before P.V        dS before dS.K     outputs (O,dQ,dK,dV)
//   fp32       fp32                  fp32                fp32               fp32
//   fp16       fp16                  fp16                fp16               fp16
//   bf16       bf16                  bf16                bf16               bf16
//   fp8_e4m3   e4m3, scaled          e4m3, x256          bf16 (assumed)     bf16
//   fp8_e5m2   e5m2, scaled          e5m2, x256          bf16 (assumed)     bf16
//
// Scores, softmax statistics and every accumulator are fp32, except where a kernel stores S itself in the
// input type (`scores`: naive's kScoreBits = 16, PyTorch's math path, rounds each scaled score s * scale
// to fp16/bf16 before the softmax; the exponent then carries up to |s scale| u_S: 2^-8 relative in bf16,
// 2^-11 in fp16). FP8: P is computed as exp(s - m) * 2^8 (FlashAttention-3's Max_offset = 8) so the largest
// weight is 256, inside e4m3's range (448), and the small weights stay out of its subnormals; the factor
// cancels in O = (P V) / l. FlashAttention-3 writes O in bf16 for FP8 inputs. It has no published FP8
// backward: we assume dO is quantised like Q, K, V and dS is kept in bf16 (its range varies too much from row
// to row for one FP8 scale).
#include <cstdint>
#include "common/precision.hpp"
#include "numerics/fp8_quantization.hpp"
#include "numerics/fp8_variants.hpp"

namespace fl::numerics {

// FlashAttention-3's FP8 offset: exp2(x - m + 8), so P <= 2^8.
constexpr double kFp8ProbabilityScale = 256.0;

struct PrecisionRecipe {
  common::Precision claimed = common::Precision::bf16;
  common::Precision operands = common::Precision::bf16;
  common::Precision probabilities = common::Precision::bf16;
  double probability_scale = 1.0;
  common::Precision score_gradients = common::Precision::bf16;
  common::Precision outputs = common::Precision::bf16;
  // The scaled scores as the softmax reads them: fp32 (every fused kernel), or rounded to the input type
  // (a standard attention that stores S in 16 bits). recipe_for gives fp32.
  common::Precision scores = common::Precision::fp32;
  // FP8 only:
  common::Fp8Scaling fp8_scaling = common::Fp8Scaling::per_tensor;
  int fp8_block_rows = common::kDefaultFp8BlockRows;
  bool incoherent = false;
  std::uint64_t incoherent_seed = 0;
  Fp8Variants fp8_variants;  // beyond FlashAttention-3 (numerics/fp8_variants.hpp); empty: fa3
};

PrecisionRecipe recipe_for(common::Precision claimed);
// An FP8 recipe with `variants` (bf16_pv moves P to bf16; the operands follow in quantize_operands).
PrecisionRecipe with_fp8_variants(PrecisionRecipe r, Fp8Variants variants);

// The recipe of a kernel that rounds its scaled scores to the input type (fp16 or bf16 claims; FP8
// kernels keep S in fp32 and are refused: std::invalid_argument).
PrecisionRecipe with_scores_in_input_type(PrecisionRecipe r);

// A scaled score s * scale as the softmax reads it (rounded to the recipe's `scores`; fp32: unchanged).
float round_score(PrecisionRecipe const& r, float scaled_score);

// P (a probability or an unnormalised weight <= 1) as the P.V product sees it: scaled, rounded with
// saturation, scaled back.
float round_probability(PrecisionRecipe const& r, float p);

}  // namespace fl::numerics
