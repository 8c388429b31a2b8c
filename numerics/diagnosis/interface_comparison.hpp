#pragma once
// The pieces the interface-mistake hypotheses share (interface_mistakes.cpp, interface_heads_dropout.cpp):
// the comparison a hypothesis is judged in, the forward reference on the compared rows, and the rule that
// names a hypothesis only when it explains the observation far better than the reference. Internal to
// numerics/diagnosis.
#include <string>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/check.hpp"
#include "numerics/diagnosis/match_error.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics::diagnosis::interface_detail {

struct Comparison {
  AttentionInputs const& in;
  AttentionOutputs const& observed;
  std::vector<std::size_t> rows;  // compared flat query rows, sorted
  int threads;
  std::vector<std::string>* declined;  // where a hypothesis that declines says so (may be null)
  MatchError correct;                  // the reference's own match on O (and LSE)
  MatchError correct_lse;
  std::vector<double> reference_o, reference_lse;  // packed per compared row
};

// The float64 forward of `in` on the query rows `rows`.
SampledOutputs reference_on(AttentionInputs in, std::vector<std::size_t> const& rows, int threads);

// Match of `observed` (O and, when given, LSE) against a packed reference on the compared rows.
MatchError match_forward(Comparison const& c, std::vector<double> const& observed_o,
                         std::vector<double> const& observed_lse, SampledOutputs const& ref);

// Adds the hypothesis `id` to `out` when it reproduces every non-finite row and is far better than `correct`.
void name_if_far_better(Comparison const& c, MatchError const& hypothesis, MatchError const& correct,
                        std::string id, std::string what, std::string fix,
                        std::vector<fl::numerics::DiagnosisEntry>& out);

// The output of another (batch, head) at the same positions: each failing head matched against all.
void try_wrong_head(Comparison const& c, std::vector<fl::numerics::DiagnosisEntry>& out);

// Dropout left on: E|O_obs - O|^2 = r sum_j P_ij^2 |V_j|^2 with r = p / (1 - p), the same r for every row.
void try_dropout(Comparison const& c, std::vector<fl::numerics::DiagnosisEntry>& out);

}  // namespace fl::numerics::diagnosis::interface_detail
