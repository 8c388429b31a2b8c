#pragma once
// "Standard attention" in low precision, untiled: the same-precision baseline that the tolerance model
// is cross-checked against, and the baseline rows of the FP8 report.
//
//   Q, K, V, dO  -> quantize_operands (rounded to the claimed precision; FP8 scaled per tensor or block)
//   S = Q K^T    fp32 sums over d, times the descales and the softmax scale (fp32), then rounded to the
//                recipe's `scores` (fp32: kept; the input type: naive's kScoreBits = 16)
//   P = softmax  fp32 (max, exp, sum, divide), then rounded as the P.V product sees it
//   O = P V      fp32 sums over keys, rounded to the output precision; LSE = m + log l in fp32
//   backward (P as stored by the forward, O as written): D = rowsum(dO * O), dP = dO V^T,
//   dS = P (dP - D) rounded to the dS precision, dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO,
//   all fp32 sums, rounded to the output precision.
// Computes any sample of rows like the reference (dK and dV of sampled key rows need every query row's
// softmax statistics, computed for the heads concerned).
#include "numerics/attention_tensors.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics {

SampledOutputs standard_attention_sampled(AttentionInputs const& in, PrecisionRecipe const& recipe,
                                          RowSample sample, int threads = 0);

// Every row; the backward when the inputs carry dO.
AttentionOutputs standard_attention(AttentionInputs const& in, PrecisionRecipe const& recipe,
                                    int threads = 0);

}  // namespace fl::numerics
