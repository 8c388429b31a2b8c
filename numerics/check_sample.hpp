#pragma once
// Which rows a check looks at. Every sample holds the structurally dangerous rows (the first and last rows of
// every head, the causal boundary, every fully masked row), seeded random rows, and every row a cheap screen
// of the observed outputs flags (non-finite values, O outside the range of the V rows it averages). The
// first two depend on the inputs only, so a prepared check (check.hpp) draws them once; the screen runs on
// every output judged.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics {

// True when the problem is checked on every row: forced, or no sample size given and the problem small
// (B H N_q N_k D <= kFullCheckWork, check.hpp).
bool checks_every_row(common::AttentionShape const& s, bool force_full, std::size_t sample_rows);

// The structural query rows, then `sample_rows` seeded random query rows (0: kDefaultSampleRows); with
// `backward`, the edge key rows of every head and `sample_key_rows` random key rows (0:
// kDefaultSampleKeyRows), drawn from the one generator after the query rows. Sorted, without repeats.
RowSample base_sample(common::AttentionShape const& s, bool backward, std::size_t sample_rows,
                      std::size_t sample_key_rows, std::uint64_t seed);

// The query rows the screen flags (flat, ascending): a non-finite O or dQ, a non-finite LSE where a key is
// visible, O outside the range of the V rows it averages (padded by the recipe's rounding slack), or a
// nonzero O on a fully masked row. Any softmax-weighted mean of V lies inside that range, whatever the
// precision, so a correct kernel is never flagged.
// threads: common::parallel_for's (0: every core); the rows do not depend on it.
std::vector<std::size_t> screened_query_rows(AttentionInputs const& in, AttentionOutputs const& observed,
                                             PrecisionRecipe const& recipe, int threads = 0);

// Key rows with a non-finite dK or dV (flat, ascending).
std::vector<std::size_t> nonfinite_key_rows(common::AttentionShape const& s, AttentionOutputs const& observed,
                                            int threads = 0);

// `sample` with `rows` added, sorted, without repeats.
void add_rows(std::vector<std::size_t>& sample, std::vector<std::size_t> const& rows);

}  // namespace fl::numerics
