#pragma once
// The one-row problems fa-explain walks through: a row of scores and values given on the command line, or a
// query row drawn from one of numerics' input families. Either way the result is an ordinary attention
// problem (operands as a kernel consumes them, plus the float64 inputs of the reference), so the trace runs
// the emulator's arithmetic and the answer is the reference's.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/input_families.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/quantized_operands.hpp"

namespace fl::numerics::explain {

struct RowProblem {
  AttentionInputs inputs;  // float64, the values the kernel sees (the reference's inputs)
  PrecisionRecipe recipe;
  QuantizedOperands operands;  // as the kernel's products consume them
  std::size_t row = 0;         // flat (B, H_q, N_q) index of the row to explain
  std::string description;     // one line: where the row comes from
  bool given_scores = false;   // scores given directly (no Q, K: no FP8 descale of K to drop)
};

// Scores s_j (already scaled unless softmax_scale says otherwise) and values V (N x head_dim, row-major).
// Scores are taken in fp32 as a kernel computes S; -inf marks a masked key (not with FP8: a masked key has
// no FP8 code). Built as Q = e_0, K_j = s_j e_0, so Q K^T = s exactly. Throws std::invalid_argument naming
// the bad value (sizes, NaN, +inf, a non-positive scale).
RowProblem row_from_scores(std::span<double const> scores, std::span<double const> values, int head_dim,
                           double softmax_scale, common::Precision precision);

struct FamilyRowRequest {
  InputFamily family = InputFamily::normal;
  int keys = 256;  // N_q = N_k (the family may adjust both, see input_families.hpp)
  int head_dim = 64;
  std::uint64_t seed = 1;
  bool causal = false;
  long long row = -1;  // query position; -1: the family's first adversarial row (the one with its property)
  common::Precision precision = common::Precision::fp32;
};

// Throws std::invalid_argument, one line with the allowed range, for keys outside common::kExplainKeys, a
// head dim outside kFamilyHeadDim or a row that is not one of the problem's query rows.
RowProblem row_from_family(FamilyRowRequest const& request);

}  // namespace fl::numerics::explain
