#pragma once
// Interface mistakes: a correct kernel called or read the wrong way. Each hypothesis is a float64 reference
// of what the kernel computed if the mistake was made (causal mask aligned top-left instead of bottom-right,
// softmax scale 1/d or 1, K and V swapped, GQA heads interleaved, inputs or output laid out (B, N, H, D),
// LSE in log2, another head's output), compared with the observation on the failing rows plus a sample of
// passing ones. A mistake is named when it reproduces the observation far better than the reference does
// (match_error.hpp's kFarBetterRatio), with the one-line fix. Dropout left on is the one statistical
// hypothesis: the per-row error matches the variance a dropout rate p would cause, with one p for all rows.
//
// Because the hypotheses are exact float64 models, they hold for any implementation (any tiles, order or
// rounding): an implementation's own rounding is the only difference left.
#include <cstddef>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/check.hpp"

namespace fl::numerics::diagnosis {

// Rows compared per hypothesis: failing rows beyond this are thinned evenly (interface mistakes act on
// whole tensors, so a few hundred rows decide), plus the passing rows rows_to_compare adds.
inline constexpr std::size_t kInterfaceRowsCompared = 192;
// Heads whose output is matched against every other head's reference (the wrong-head hypothesis).
inline constexpr std::size_t kMaxHeadsMatched = 64;

std::vector<fl::numerics::DiagnosisEntry> diagnose_interface(
    AttentionInputs const& in, AttentionOutputs const& observed,
    std::vector<std::size_t> const& failing_query_rows, int threads,
    std::vector<std::string>* declined = nullptr);  // where a hypothesis over its work cap says so

// Memory of a (B, N, H, D) tensor labelled (B, H, N, D): returns the tensor in (B, H, N, D) order.
std::vector<double> from_bnhd_memory(std::vector<double> const& t, int batch, int heads, int seqlen, int dim);

}  // namespace fl::numerics::diagnosis
