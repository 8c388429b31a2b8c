#include "numerics/explain/row_problem.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "common/input_limits.hpp"
#include "numerics/precision.hpp"

namespace fl::numerics::explain {

RowProblem row_from_scores(std::span<double const> scores, std::span<double const> values, int head_dim,
                           double softmax_scale, common::Precision precision) {
  if (scores.empty()) throw std::invalid_argument("--scores is empty: give at least one score");
  if (auto complaint = common::out_of_range(common::as_option(common::kHeadDim, "--head-dim"), head_dim))
    throw std::invalid_argument(*complaint);
  if (values.size() != scores.size() * static_cast<std::size_t>(head_dim))
    throw std::invalid_argument("--values has " + std::to_string(values.size()) + " numbers; " +
                                std::to_string(scores.size()) + " scores x head dim " +
                                std::to_string(head_dim) + " need " +
                                std::to_string(scores.size() * static_cast<std::size_t>(head_dim)));
  if (!(softmax_scale > 0) || !std::isfinite(softmax_scale))
    throw std::invalid_argument("--softmax-scale " + std::to_string(softmax_scale) +
                                " is not allowed (a positive finite number)");
  for (double s : scores) {
    if (std::isnan(s) || s == INFINITY)
      throw std::invalid_argument("--scores: " + std::to_string(s) +
                                  " is not allowed (finite numbers or -inf)");
    if (s == -INFINITY && is_fp8(precision))
      throw std::invalid_argument("--scores: -inf (a masked key) has no FP8 code; use fp32, fp16 or bf16");
  }
  for (double v : values)
    if (!std::isfinite(v)) throw std::invalid_argument("--values: " + std::to_string(v) + " is not finite");

  RowProblem p;
  common::AttentionShape& shape = p.inputs.shape;
  shape.seqlen_q = 1;
  shape.seqlen_k = static_cast<int>(scores.size());
  shape.head_dim = head_dim;
  shape.softmax_scale = softmax_scale;
  p.recipe = recipe_for(precision);
  common::Precision const stored = common::storage_precision(precision);
  p.inputs.q.assign(static_cast<std::size_t>(head_dim), 0.0);
  p.inputs.q[0] = 1.0;
  p.inputs.k.assign(values.size(), 0.0);
  p.inputs.v.resize(values.size());
  auto const d = static_cast<std::size_t>(head_dim);
  for (std::size_t j = 0; j < scores.size(); ++j) p.inputs.k[j * d] = static_cast<float>(scores[j]);
  for (std::size_t i = 0; i < values.size(); ++i)
    p.inputs.v[i] = round_to(stored, static_cast<float>(values[i]));
  p.operands = quantize_operands(p.inputs, p.recipe);
  // The scores stay fp32 whatever the precision: a kernel computes S in fp32, and the lesson's scores are S.
  for (std::size_t j = 0; j < scores.size(); ++j) {
    p.operands.k[j * d] = static_cast<float>(scores[j]);
    for (std::size_t e = 1; e < d; ++e) p.operands.k[j * d + e] = 0.0f;
  }
  p.operands.q.assign(d, 0.0f);
  p.operands.q[0] = 1.0f;
  p.operands.q_descale.assign(1, 1.0f);
  p.operands.k_descale.assign(scores.size(), 1.0f);
  p.row = 0;
  p.given_scores = true;
  std::ostringstream text;
  text << scores.size() << " given scores, values of dimension " << head_dim;
  p.description = text.str();
  return p;
}

RowProblem row_from_family(FamilyRowRequest const& request) {
  if (auto complaint = common::out_of_range(common::kExplainKeys, request.keys))
    throw std::invalid_argument(*complaint);
  if (auto complaint = common::out_of_range(kFamilyHeadDim, request.head_dim))
    throw std::invalid_argument(*complaint);
  if (request.row < -1 || request.row >= request.keys)
    throw std::invalid_argument("--row " + std::to_string(request.row) + " is not allowed (0.." +
                                std::to_string(request.keys - 1) + ": the query rows of --keys " +
                                std::to_string(request.keys) + ")");
  FamilyRequest family_request;
  family_request.shape.seqlen_q = request.keys;
  family_request.shape.seqlen_k = request.keys;
  family_request.shape.head_dim = request.head_dim;
  family_request.shape.causal = request.causal;
  family_request.seed = request.seed;
  family_request.precision = request.precision;
  family_request.with_backward = false;
  FamilyInputs drawn = generate_family(request.family, family_request);
  RowProblem p;
  p.inputs = std::move(drawn.inputs);
  common::AttentionShape const& shape = p.inputs.shape;
  if (request.row >= shape.seqlen_q)  // a family may draw fewer query rows than keys
    throw std::invalid_argument("--row " + std::to_string(request.row) + " is not allowed (0.." +
                                std::to_string(shape.seqlen_q - 1) + ": the query rows of the " +
                                std::string(name(request.family)) + " problem)");
  p.row = request.row >= 0                 ? static_cast<std::size_t>(request.row)
          : drawn.adversarial_rows.empty() ? 0
                                           : drawn.adversarial_rows.front();
  p.recipe = recipe_for(request.precision);
  p.operands = quantize_operands(p.inputs, p.recipe);
  std::ostringstream text;
  text << "input family " << name(request.family) << ", seed " << request.seed << ": query row " << p.row
       << " of N_q = " << shape.seqlen_q << ", N_k = " << shape.seqlen_k << ", head dim " << shape.head_dim
       << (shape.causal ? ", causal (bottom-right)" : ", non-causal") << ", softmax scale 1/sqrt("
       << shape.head_dim << ")";
  p.description = text.str();
  return p;
}

}  // namespace fl::numerics::explain
