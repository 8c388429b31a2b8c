#include "numerics/diagnosis/interface_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <sstream>
#include <string>

#include "numerics/diagnosis/block_models.hpp"
#include "numerics/diagnosis/diagnose.hpp"
#include "numerics/diagnosis/interface_mistakes.hpp"

namespace fl::numerics::diagnosis::interface_detail {

namespace {

// Dropout: the pooled r = p / (1 - p) must give a plausible rate, and the rows must agree on it.
constexpr double kMinDropoutRatio = 0.003, kMaxDropoutRatio = 1.5;  // p from 0.3% to 60%
// The median of the per-row estimates against the pooled one: at most 3x above, at most 10x below. The
// squared error of a row is skewed (a dropped heavy key moves the row far, with probability p), and more
// so the fewer keys carry the row: a causal fp16 case of the corpus with 16..38 keys per row had
// median/pooled 0.27 (measured), while the estimates of one r still agree within the factors.
constexpr double kDropoutRowSpread = 3.0, kDropoutMedianBelow = 10.0;
constexpr std::size_t kMinDropoutRows = 8;
// Rows that see fewer keys are left out: there one dropped key moves the row by a whole V, so the squared
// error is far from its mean in most rows and the median test below would refuse real dropout (a causal
// fp16 case of the corpus: median/pooled 0.28 with every row, measured).
constexpr int kMinDropoutKeys = 16;
// Multiply-adds the wrong-head hypothesis may spend on references (about 2 s on this machine's cores).
constexpr double kMaxWrongHeadWork = 2e9;
// |sum of the rows' errors|^2 over the sum of their squared norms: about 1 for independent errors (its spread
// is ~sqrt(2/D)), about the number of rows for a systematic one.
constexpr double kMaxDropoutCoherence = 2.0;

}  // namespace

void try_wrong_head(Comparison const& c, std::vector<fl::numerics::DiagnosisEntry>& out) {
  common::AttentionShape const& s = c.in.shape;
  std::size_t const heads = std::size_t(s.batch) * s.heads_q;
  if (heads < 2 || heads > kMaxHeadsMatched) return;
  std::size_t const nq = std::size_t(s.seqlen_q), d = std::size_t(s.head_dim);
  std::vector<int> positions;
  for (std::size_t r : c.rows) positions.push_back(int(r % nq));
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  // Every head's reference at these positions: skipped where that would take long (a sampled check of a
  // long sequence), as the other hypotheses' references cost one row set each.
  if (double const work = double(heads) * double(positions.size()) * s.seqlen_k * s.head_dim;
      work > kMaxWrongHeadWork) {
    if (c.declined)
      c.declined->push_back(declined_note("the wrong-head hypothesis", work, kMaxWrongHeadWork,
                                          "compare one head's output with fa-check on that head alone"));
    return;
  }
  std::vector<std::size_t> all_rows;
  for (std::size_t bh = 0; bh < heads; ++bh)
    for (int p : positions) all_rows.push_back(bh * nq + std::size_t(p));
  SampledOutputs const ref = reference_on(c.in, all_rows, c.threads);  // packed head by head
  std::size_t const per_head = positions.size();
  // Over all heads: each head's own reference, and the hypothesis (a head that holds another head's output
  // is matched against that head's reference, the others against their own).
  MatchError own_all, hypothesis;
  std::ostringstream mapping;
  std::size_t moved = 0;
  for (std::size_t bh = 0; bh < heads; ++bh) {
    std::vector<std::size_t> rows(all_rows.begin() + std::ptrdiff_t(bh * per_head),
                                  all_rows.begin() + std::ptrdiff_t((bh + 1) * per_head));
    auto reference_of = [&](std::size_t head) {
      return std::span<double const>(ref.o.data() + head * per_head * d, per_head * d);
    };
    MatchError const own = match_packed(c.observed.o, reference_of(bh), d, rows, false);
    std::size_t best_head = bh;
    MatchError best = own;
    for (std::size_t other = 0; other < heads; ++other) {
      MatchError const e = match_packed(c.observed.o, reference_of(other), d, rows, false);
      if (e < best) best = e, best_head = other;
    }
    own_all = combine(own_all, own);
    bool const holds_other = best_head != bh && far_better(best, own);
    hypothesis = combine(hypothesis, holds_other ? best : own);
    if (holds_other && moved++ < 4)
      mapping << (moved > 1 ? ", " : "") << "(b " << bh / std::size_t(s.heads_q) << ", h "
              << bh % std::size_t(s.heads_q) << ") holds (b " << best_head / std::size_t(s.heads_q) << ", h "
              << best_head % std::size_t(s.heads_q) << ")";
  }
  if (moved == 0) return;
  name_if_far_better(c, hypothesis, own_all, "wrong-head",
                     "the output holds other heads' attention: " + mapping.str() +
                         (moved > 4 ? " and " + std::to_string(moved - 4) + " more" : std::string()),
                     "index the output by its own batch and head (check the strides or permutation the "
                     "kernel writes O with)",
                     out);
}

// Dropout left on: E|O_obs - O|^2 = r sum_j P_ij^2 |V_j|^2 with r = p / (1 - p), the same r for every row.
void try_dropout(Comparison const& c, std::vector<fl::numerics::DiagnosisEntry>& out) {
  common::AttentionShape const& s = c.in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  std::vector<double> ratios;
  std::vector<double> error_sum_vector(d, 0.0);
  double error_sum = 0, variance_sum = 0;
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    std::size_t const row = c.rows[i];
    RowIndex const x = query_row_index(s, row);
    int const visible = visible_keys(s, x.pos);
    if (visible < kMinDropoutKeys) continue;
    double const* q = c.in.q.data() + row * d;
    std::size_t const kv0 = first_key_row_for_query(s, row);
    std::vector<double> score(static_cast<std::size_t>(visible));
    for (std::size_t j = 0; j < std::size_t(visible); ++j) {
      double dot = 0;
      for (std::size_t e = 0; e < d; ++e) dot += q[e] * c.in.k[(kv0 + j) * d + e];
      score[j] = dot * s.scale();
    }
    double const m = *std::max_element(score.begin(), score.end());
    double l = 0;
    for (double& x_ : score) l += (x_ = std::exp(x_ - m));
    double variance = 0;
    for (std::size_t j = 0; j < std::size_t(visible); ++j) {
      double const p = score[j] / l;
      double norm = 0;
      for (std::size_t e = 0; e < d; ++e) norm += c.in.v[(kv0 + j) * d + e] * c.in.v[(kv0 + j) * d + e];
      variance += p * p * norm;
    }
    double error = 0;
    for (std::size_t e = 0; e < d; ++e) {
      double const diff = c.observed.o[row * d + e] - c.reference_o[i * d + e];
      if (!std::isfinite(diff)) return;  // dropout makes no NaN
      error += diff * diff;
      error_sum_vector[e] += diff;
    }
    if (variance <= 0) continue;
    error_sum += error;
    variance_sum += variance;
    ratios.push_back(error / variance);
  }
  if (ratios.size() < kMinDropoutRows || variance_sum <= 0) return;
  // Independent masks make the rows' errors uncorrelated: |sum_i e_i|^2 is about sum_i |e_i|^2. A systematic
  // bug pushes similar rows the same way, and the sum grows like the number of rows.
  double summed_norm = 0;
  for (double x : error_sum_vector) summed_norm += x * x;
  if (summed_norm > kMaxDropoutCoherence * error_sum) return;
  double const pooled = error_sum / variance_sum;
  std::nth_element(ratios.begin(), ratios.begin() + std::ptrdiff_t(ratios.size() / 2), ratios.end());
  double const median = ratios[ratios.size() / 2];
  if (pooled < kMinDropoutRatio || pooled > kMaxDropoutRatio) return;
  // A squared error spread like a chi-square with ~D degrees of freedom has its median near the mean.
  if (median <= 0 || median * kDropoutMedianBelow < pooled || median > kDropoutRowSpread * pooled) return;
  if (c.observed.lse.size() == query_rows(s) && c.correct_lse.worst_row_error > 0.05)
    return;  // dropout keeps LSE
  double const p = pooled / (1 + pooled);
  fl::numerics::DiagnosisEntry e;
  e.id = "dropout-on";
  e.kind = "interface";
  std::ostringstream what;
  what.precision(2);
  what << "the error of each row is random with the variance dropout at p = " << p
       << " gives (r = p/(1-p) estimated per row over " << ratios.size()
       << " rows: median/pooled = " << median / pooled << ")"
       << (c.observed.lse.empty() ? "" : "; LSE is right, as dropout leaves it");
  e.evidence = what.str();
  e.fix = "turn dropout off for the check (dropout_p=0.0, or the module in eval() mode)";
  e.match_error = std::abs(std::log(median / pooled));
  e.strength = kDropoutRowSpread / std::max(median / pooled, pooled / median);
  out.push_back(std::move(e));
}

}  // namespace fl::numerics::diagnosis::interface_detail
