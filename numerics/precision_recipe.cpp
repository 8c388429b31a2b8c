#include "numerics/precision_recipe.hpp"

#include <stdexcept>
#include <string>

#include "numerics/precision.hpp"

namespace fl::numerics {

PrecisionRecipe recipe_for(common::Precision claimed) {
  PrecisionRecipe r;
  r.claimed = claimed;
  r.operands = claimed;
  r.probabilities = claimed;
  r.score_gradients = claimed;
  r.outputs = claimed;
  if (is_fp8(claimed)) {
    r.probability_scale = kFp8ProbabilityScale;
    r.score_gradients = common::Precision::bf16;
    r.outputs = common::Precision::bf16;
  }
  return r;
}

PrecisionRecipe with_fp8_variants(PrecisionRecipe r, Fp8Variants variants) {
  r.fp8_variants = variants;
  // P in bf16 needs no offset for range; keeping 2^8 changes nothing in bf16 and keeps l's factor one.
  if (variants.has(Fp8Variant::bf16_pv) && is_fp8(r.probabilities)) r.probabilities = common::Precision::bf16;
  return r;
}

PrecisionRecipe with_scores_in_input_type(PrecisionRecipe r) {
  if (is_fp8(r.operands))
    throw std::invalid_argument(
        "scores in the input type: only fp16 and bf16 (an FP8 kernel keeps S in fp32, not " +
        std::string(common::name(r.operands)) + ")");
  r.scores = r.operands;
  return r;
}

float round_score(PrecisionRecipe const& r, float scaled_score) {
  return round_to(r.scores, scaled_score);
}

float round_probability(PrecisionRecipe const& r, float p) {
  if (r.probability_scale == 1.0) return round_to(r.probabilities, p);
  float const s = float(r.probability_scale);
  return round_to(r.probabilities, p * s) / s;
}

}  // namespace fl::numerics
