#include "numerics/check_sample.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/parallel_for.hpp"
#include "numerics/check.hpp"
#include "numerics/precision.hpp"
#include "numerics/seeded_random.hpp"

namespace fl::numerics {

namespace {

constexpr int kStructuralEdgeRows = 2;  // first and last rows of every head

bool finite_row(std::vector<double> const& t, std::size_t row, std::size_t len) {
  if (t.empty()) return true;
  for (std::size_t e = 0; e < len; ++e)
    if (!std::isfinite(t[row * len + e])) return false;
  return true;
}

// The indices of the flagged rows, ascending.
std::vector<std::size_t> flagged_rows(std::vector<std::uint8_t> const& flagged) {
  std::vector<std::size_t> rows;
  for (std::size_t row = 0; row < flagged.size(); ++row)
    if (flagged[row]) rows.push_back(row);
  return rows;
}

// The screen of one (batch, query head)'s rows into `flagged` (screened_query_rows).
void screen_head(AttentionInputs const& in, AttentionOutputs const& obs, double slack, std::size_t bh,
                 std::vector<std::uint8_t>& flagged) {
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  std::size_t const row0 = bh * std::size_t(s.seqlen_q);
  std::size_t const k0 = first_key_row_for_query(s, row0);
  // Running min/max of V over keys 0..j (visible keys are a prefix under bottom-right causal masks).
  std::vector<double> lo(d, INFINITY), hi(d, -INFINITY);
  int covered = 0;
  for (int i = 0; i < s.seqlen_q; ++i) {
    std::size_t const row = row0 + std::size_t(i);
    int const n = visible_keys(s, i);
    for (; covered < n; ++covered)
      for (std::size_t e = 0; e < d; ++e) {
        double const v = in.v[(k0 + std::size_t(covered)) * d + e];
        lo[e] = std::min(lo[e], v);
        hi[e] = std::max(hi[e], v);
      }
    bool flag = !finite_row(obs.o, row, d) || !finite_row(obs.dq, row, d);
    if (!obs.lse.empty() && n > 0 && !std::isfinite(obs.lse[row])) flag = true;
    for (std::size_t e = 0; e < d && !flag && n > 0; ++e) {
      double const x = obs.o[row * d + e];
      double const pad = slack * std::max(std::fabs(lo[e]), std::fabs(hi[e]));
      if (x < lo[e] - pad || x > hi[e] + pad) flag = true;
    }
    if (n == 0)
      for (std::size_t e = 0; e < d && !flag; ++e) flag = obs.o[row * d + e] != 0.0;
    flagged[row] = flag;
  }
}

// The first and last rows of each head, the causal boundary (first rows that see a key) and every fully
// masked row.
void add_structural_query_rows(common::AttentionShape const& s, std::vector<std::size_t>& rows) {
  int const first_visible = s.causal ? int(std::clamp<std::int64_t>(-s.causal_offset(), 0, s.seqlen_q)) : 0;
  for (std::size_t h = 0; h < std::size_t(s.batch) * s.heads_q; ++h) {
    std::size_t const base = h * std::size_t(s.seqlen_q);
    for (int i = 0; i < kStructuralEdgeRows && i < s.seqlen_q; ++i) {
      rows.push_back(base + std::size_t(i));
      rows.push_back(base + std::size_t(s.seqlen_q - 1 - i));
    }
    for (int i = 0; i < first_visible; ++i) rows.push_back(base + std::size_t(i));
    for (int i = first_visible; i < std::min(s.seqlen_q, first_visible + kStructuralEdgeRows); ++i)
      rows.push_back(base + std::size_t(i));
  }
}

}  // namespace

bool checks_every_row(common::AttentionShape const& s, bool force_full, std::size_t sample_rows) {
  double const work = double(s.batch) * s.heads_q * s.seqlen_q * double(s.seqlen_k) * s.head_dim;
  return force_full || (sample_rows == 0 && work <= kFullCheckWork);
}

RowSample base_sample(common::AttentionShape const& s, bool backward, std::size_t sample_rows,
                      std::size_t sample_key_rows, std::uint64_t seed) {
  RowSample sample;
  add_structural_query_rows(s, sample.query_rows);
  SeededRandom rng(seed);
  std::size_t const total_q = query_rows(s);
  std::size_t const want_q = sample_rows ? sample_rows : kDefaultSampleRows;
  for (std::size_t t = 0; t < want_q; ++t)
    sample.query_rows.push_back(std::size_t(rng.uniform() * double(total_q)));
  if (backward) {
    for (std::size_t h = 0; h < std::size_t(s.batch) * s.heads_kv; ++h) {
      std::size_t const base = h * std::size_t(s.seqlen_k);
      for (int j = 0; j < kStructuralEdgeRows && j < s.seqlen_k; ++j) {
        sample.key_rows.push_back(base + std::size_t(j));
        sample.key_rows.push_back(base + std::size_t(s.seqlen_k - 1 - j));
      }
    }
    std::size_t const want_k = sample_key_rows ? sample_key_rows : kDefaultSampleKeyRows;
    for (std::size_t t = 0; t < want_k; ++t)
      sample.key_rows.push_back(std::size_t(rng.uniform() * double(key_rows(s))));
  }
  sort_unique(sample.query_rows);
  sort_unique(sample.key_rows);
  return sample;
}

std::vector<std::size_t> screened_query_rows(AttentionInputs const& in, AttentionOutputs const& obs,
                                             PrecisionRecipe const& r, int threads) {
  double const slack = 2.0 * unit_roundoff(r.outputs) + unit_roundoff(r.probabilities);
  // One flag per row, set head by head in parallel (a headline problem screens 0.5M rows of O and dQ: a
  // second of one core per tuning candidate, tuner/README.md), then collected in row order.
  std::vector<std::uint8_t> flagged(query_rows(in.shape), 0);
  common::parallel_for(std::size_t(in.shape.batch) * in.shape.heads_q,
                       common::elementwise_threads(obs.o.size(), threads),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t bh = begin; bh < end; ++bh)
                           screen_head(in, obs, slack, bh, flagged);
                       });
  return flagged_rows(flagged);
}

std::vector<std::size_t> nonfinite_key_rows(common::AttentionShape const& s, AttentionOutputs const& obs,
                                            int threads) {
  std::size_t const d = std::size_t(s.head_dim);
  std::vector<std::uint8_t> flagged(key_rows(s), 0);
  common::parallel_for(flagged.size(), common::elementwise_threads(obs.dk.size(), threads),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t c = begin; c < end; ++c)
                           flagged[c] = !finite_row(obs.dk, c, d) || !finite_row(obs.dv, c, d);
                       });
  return flagged_rows(flagged);
}

void add_rows(std::vector<std::size_t>& sample, std::vector<std::size_t> const& rows) {
  sample.insert(sample.end(), rows.begin(), rows.end());
  sort_unique(sample);
}

}  // namespace fl::numerics
