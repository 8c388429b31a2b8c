#pragma once
// The float64 reference of attention, forward (O, LSE) and backward (dQ, dK, dV from dO).
//
// Every sum over keys or queries is compensated (Neumaier for scalars, TwoSum per element for vectors);
// dot products over the head dimension use eight partial sums. Its own relative error is below 1e-12,
// which tests/numerics/reference_test.cpp checks against a 50-digit Boost.Multiprecision evaluation.
//
// Conventions: softmax scale from AttentionShape::scale(); causal masks bottom-right aligned (query i sees
// key j when j <= i + N_k - N_q); grouped-query attention (query head h reads key/value head
// h / (H_q / H_kv)). A query row with no visible key (causal with N_q > N_k) has O = 0, dQ = 0,
// LSE = -inf and contributes nothing to dK and dV: the limit of an empty softmax whose weights are all 0.
//
// Forward and dQ of a query row depend only on that row, so any set of rows can be computed exactly on its
// own. dK and dV of a key row need every query row's LSE and D = rowsum(dO * O); the sampled mode computes
// those statistics for all rows of the heads it needs (2 dot products per score), or takes them from the
// caller (ReferenceOptions::known_statistics), and then the sampled key rows exactly. Either way every
// sampled value is bit for bit the full reference's (reference_attention's) value of that element: a row's
// statistics are computed by the same operations whichever rows are computed with it
// (numerics/reference_rows.hpp).
#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "numerics/attention_tensors.hpp"

namespace fl::numerics {

// LSE and D_i = sum_j P_ij dP_ij (= rowsum(dO * O)) of every query row, (B, H_q, N_q) each, as the reference
// computes them: what dK and dV of any key row need. delta is empty without dO.
struct RowStatistics {
  std::vector<double> lse;
  std::vector<double> delta;
};

// How O = sum_j P_ij V_j is summed over the keys, in key order either way.
enum class OutputSum {
  // TwoSum per element: the reference's O, relative error below 1e-12.
  compensated,
  // One rounding per addition: error below N_k * 2^-53 * max|V| (1.8e-12 max|V| at N_k = 16384), for an O
  // that is only rounded to float and to a 16-bit or FP8 dtype (a backward kernel's forward input), where
  // the two differ only for a value that close to a rounding boundary. A third less time per score: O's
  // compensated sum is about half of a forward pass with D (numerics/README.md, "Costs").
  plain,
};

struct ReferenceOptions {
  int threads = 0;  // 0: all hardware threads
  // Every query row's statistics, computed before (reference_forward_rows, e.g. for the forward a backward
  // kernel reads): the sampled mode then skips its statistics pass. They must be the reference's own:
  // reference_sampled throws std::invalid_argument when a sampled query row's differ in any bit.
  RowStatistics const* known_statistics = nullptr;
  // reference_forward_rows: set (by another thread) stops the pass at its next block of rows, which then
  // throws ReferenceCancelled (fa-tune computes the next problem's forward ahead, and drops it at the end).
  std::atomic<bool> const* cancel = nullptr;
  // O's sum (reference_forward_rows and the sampled rows' O of reference_sampled); LSE, D, dQ, dK and dV
  // are the same bits either way.
  OutputSum o_sum = OutputSum::compensated;
  // reference_sampled: O and LSE only, as if the inputs carried no dO (no D, dQ, dK, dV), without copying
  // the inputs to drop it (fa-tune checks a stored forward of a backward problem this way).
  bool forward_only = false;
};

struct ReferenceCancelled : std::runtime_error {
  ReferenceCancelled() : std::runtime_error("the reference pass was cancelled") {}
};

// Which rows to compute: flat query row indices (for O, LSE, dQ) and flat key row indices (dK, dV).
// Kept sorted and unique.
struct RowSample {
  std::vector<std::size_t> query_rows;
  std::vector<std::size_t> key_rows;

  static RowSample all(common::AttentionShape const& shape, bool with_key_rows);
};

// `rows` sorted ascending, without repeats (what a RowSample's lists are kept as).
void sort_unique(std::vector<std::size_t>& rows);

// Values on the rows of a sample (the reference's, or an emulation's), packed in sample order: o, dq are
// (query_rows.size(), D), lse and delta (D_i = rowsum(dO_i * O_i)) are (query_rows.size()), dk and dv
// (key_rows.size(), D). The backward fields are empty when the inputs carry no dO.
struct SampledOutputs {
  RowSample sample;
  std::vector<double> o;
  std::vector<double> lse;
  std::vector<double> delta;
  std::vector<double> dq;
  std::vector<double> dk;
  std::vector<double> dv;
  // With sampled key rows: LSE and D of every query row (NaN for heads no sampled key row needs, unless
  // ReferenceOptions::known_statistics gave them all).
  std::vector<double> all_lse;
  std::vector<double> all_delta;
};

SampledOutputs reference_sampled(AttentionInputs const& in, RowSample sample,
                                 ReferenceOptions const& options = {});

// O and the statistics (D with dO) of every query row, bit for bit reference_attention's O and LSE and the
// values the sampled mode's statistics pass computes; no dQ, dK, dV. The forward costs one pass over the keys
// per block of rows; D adds one dot product per score.
struct ReferenceForward {
  std::vector<double> o;  // (B, H_q, N_q, D)
  RowStatistics statistics;
};
ReferenceForward reference_forward_rows(AttentionInputs const& in, ReferenceOptions const& options = {});

// Every row: O, LSE and, when the inputs carry dO, dQ, dK, dV.
AttentionOutputs reference_attention(AttentionInputs const& in, ReferenceOptions const& options = {});

}  // namespace fl::numerics
