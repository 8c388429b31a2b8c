#pragma once
// Per-element pass/fail of an implementation's outputs against the reference and the tolerance bounds,
// on the rows of a sample. An element fails when |x - ref| > tau, or when it is NaN, or infinite where
// the reference is finite. LSE of a fully masked row must be an infinity: -inf (the limit log 0) or
// +inf (what FlashAttention-2 writes, so that its backward recomputes P = exp(s - inf) = 0).
#include <cstddef>
#include <string>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/metrics.hpp"
#include "numerics/reference.hpp"
#include "numerics/tolerance.hpp"

namespace fl::numerics {

struct OutputJudgement {
  std::string name;  // "O", "LSE", "dQ", "dK", "dV"
  bool checked = false;
  ErrorMetrics metrics;
  std::size_t failing_elements = 0;
  double worst_ratio = 0.0;               // max over elements of |x - ref| / tau (inf for NaN)
  std::size_t worst_element = 0;          // index into the packed sample
  std::vector<double> row_max_error;      // per sampled row: max |x - ref|
  std::vector<double> row_max_ratio;      // per sampled row: max |x - ref| / tau
  std::vector<std::size_t> failing_rows;  // flat query (O, LSE, dQ) or key (dK, dV) rows, sorted
};

struct Judgement {
  bool pass = true;
  std::vector<OutputJudgement> outputs;  // O, LSE, dQ, dK, dV in this order (unchecked ones flagged)
  std::vector<std::size_t> failing_query_rows;
  std::vector<std::size_t> failing_key_rows;
};

// `observed` holds full tensors; empty ones (no LSE, no backward) are not judged.
Judgement judge(common::AttentionShape const& shape, SampledOutputs const& reference,
                ElementBounds const& bounds, AttentionOutputs const& observed);

// The sampled rows of a full tensor, packed like SampledOutputs.
std::vector<double> gather_rows(std::vector<double> const& full, std::vector<std::size_t> const& rows,
                                std::size_t row_length);

}  // namespace fl::numerics
