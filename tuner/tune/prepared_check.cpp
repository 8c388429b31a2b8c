#include "tuner/tune/prepared_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "numerics/judge.hpp"
#include "numerics/seeded_random.hpp"
#include "numerics/tolerance.hpp"

namespace fl::tuner {

namespace {

// numerics/check.cpp: the first and last rows of every head are in every sample.
constexpr int kStructuralEdgeRows = 2;

bool finite_row(std::vector<float> const& t, std::size_t row, std::size_t len) {
  if (t.empty()) return true;
  for (std::size_t e = 0; e < len; ++e)
    if (!std::isfinite(t[row * len + e])) return false;
  return true;
}

void sort_unique(std::vector<std::size_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// run_check's sample without the screened rows: structural rows (edges of every head, the causal boundary,
// fully masked rows), then the seeded random query rows, then (backward) the edge and random key rows, drawn
// from one generator in that order, as numerics/check.cpp draws them.
numerics::RowSample base_sample(numerics::AttentionShape const& s, bool backward, std::size_t sample_rows,
                                std::uint64_t seed) {
  numerics::RowSample sample;
  int const first_visible = s.causal ? int(std::clamp<std::int64_t>(-s.causal_offset(), 0, s.seqlen_q)) : 0;
  for (std::size_t h = 0; h < std::size_t(s.batch) * s.heads_q; ++h) {
    std::size_t const base = h * std::size_t(s.seqlen_q);
    for (int i = 0; i < kStructuralEdgeRows && i < s.seqlen_q; ++i) {
      sample.query_rows.push_back(base + std::size_t(i));
      sample.query_rows.push_back(base + std::size_t(s.seqlen_q - 1 - i));
    }
    for (int i = 0; i < first_visible; ++i) sample.query_rows.push_back(base + std::size_t(i));
    for (int i = first_visible; i < std::min(s.seqlen_q, first_visible + kStructuralEdgeRows); ++i)
      sample.query_rows.push_back(base + std::size_t(i));
  }
  numerics::SeededRandom rng(seed);
  std::size_t const total_q = numerics::query_rows(s);
  std::size_t const want_q = sample_rows ? sample_rows : numerics::kDefaultSampleRows;
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
    for (std::size_t t = 0; t < numerics::kDefaultSampleKeyRows; ++t)
      sample.key_rows.push_back(std::size_t(rng.uniform() * double(numerics::key_rows(s))));
  }
  sort_unique(sample.query_rows);
  sort_unique(sample.key_rows);
  return sample;
}

// Key rows with a non-finite dK or dV: run_check adds them to a sampled backward check.
std::vector<std::size_t> nonfinite_key_rows(numerics::AttentionShape const& s, HostOutputs const& out) {
  std::vector<std::size_t> rows;
  std::size_t const d = std::size_t(s.head_dim);
  for (std::size_t c = 0; c < numerics::key_rows(s); ++c)
    if (!finite_row(out.dk, c, d) || !finite_row(out.dv, c, d)) rows.push_back(c);
  return rows;
}

bool subset_of(std::vector<std::size_t> const& rows, std::vector<std::size_t> const& sorted_sample) {
  return std::all_of(rows.begin(), rows.end(), [&](std::size_t r) {
    return std::binary_search(sorted_sample.begin(), sorted_sample.end(), r);
  });
}

}  // namespace

std::vector<std::size_t> screened_rows(numerics::AttentionShape const& s, std::vector<float> const& v,
                                       HostOutputs const& out, numerics::PrecisionRecipe const& recipe) {
  std::size_t const d = std::size_t(s.head_dim);
  std::vector<std::size_t> rows;
  double const slack =
      2.0 * numerics::unit_roundoff(recipe.outputs) + numerics::unit_roundoff(recipe.probabilities);
  for (std::size_t bh = 0; bh < std::size_t(s.batch) * s.heads_q; ++bh) {
    std::size_t const row0 = bh * std::size_t(s.seqlen_q);
    std::size_t const k0 = numerics::first_key_row_for_query(s, row0);
    std::vector<double> lo(d, INFINITY), hi(d, -INFINITY);
    int covered = 0;
    for (int i = 0; i < s.seqlen_q; ++i) {
      std::size_t const row = row0 + std::size_t(i);
      int const n = numerics::visible_keys(s, i);
      for (; covered < n; ++covered)
        for (std::size_t e = 0; e < d; ++e) {
          double const x = v[(k0 + std::size_t(covered)) * d + e];
          lo[e] = std::min(lo[e], x);
          hi[e] = std::max(hi[e], x);
        }
      bool flag = !finite_row(out.o, row, d) || !finite_row(out.dq, row, d);
      if (!out.lse.empty() && n > 0 && !std::isfinite(double(out.lse[row]))) flag = true;
      for (std::size_t e = 0; e < d && !flag && n > 0; ++e) {
        double const x = out.o[row * d + e];
        double const pad = slack * std::max(std::fabs(lo[e]), std::fabs(hi[e]));
        if (x < lo[e] - pad || x > hi[e] + pad) flag = true;
      }
      if (n == 0)
        for (std::size_t e = 0; e < d && !flag; ++e) flag = double(out.o[row * d + e]) != 0.0;
      if (flag) rows.push_back(row);
    }
  }
  return rows;
}

PreparedCheck::PreparedCheck(Problem const& problem, HostInputs inputs, std::size_t sample_rows,
                             std::uint64_t seed)
    : problem_(problem),
      inputs_(std::move(inputs)),
      sample_rows_(sample_rows),
      seed_(seed),
      recipe_(numerics::recipe_for(problem.dtype)) {
  auto const in = to_numerics(problem_, inputs_);
  auto const& s = in.shape;
  double const work = double(s.batch) * s.heads_q * s.seqlen_q * double(s.seqlen_k) * s.head_dim;
  sampled_ = !(sample_rows_ == 0 && work <= numerics::kFullCheckWork);
  auto const sample = sampled_ ? base_sample(s, in.has_backward(), sample_rows_, seed_)
                               : numerics::RowSample::all(s, in.has_backward());
  reference_ = numerics::reference_sampled(in, sample, {});
  numerics::ToleranceOptions tol;
  tol.inputs_exact =
      !numerics::is_fp8(recipe_.claimed) && numerics::inputs_representable(in, recipe_.operands);
  tol.approximate_unsampled_row_stats = sampled_ && in.has_backward();
  tol.reference = &reference_;
  bounds_ = numerics::tolerance_bounds(in, reference_.sample, recipe_, tol);
}

Verdict PreparedCheck::judge(HostOutputs const& out) const {
  auto const& s = problem_.shape;
  bool const off_sample =
      sampled_ && (!subset_of(screened_rows(s, inputs_.v, out, recipe_), reference_.sample.query_rows) ||
                   !subset_of(nonfinite_key_rows(s, out), reference_.sample.key_rows));
  if (!off_sample) {
    auto const judgement = numerics::judge(s, reference_, bounds_, to_numerics(out));
    if (judgement.pass) {
      std::string text = "pass";
      for (auto const& j : judgement.outputs) {
        if (!j.checked) continue;
        char buf[160];
        std::snprintf(buf, sizeof buf, "; %s worst/bound %.2f, %zu failing, NaN %zu", j.name.c_str(),
                      j.worst_ratio, j.failing_elements, j.metrics.nan_count);
        text += buf;
      }
      text += "; " + std::to_string(reference_.sample.query_rows.size()) + "/" +
              std::to_string(numerics::query_rows(s)) + " rows";
      return {true, text};
    }
  }
  // Off the prepared sample, or failing: numerics' own check, whose summary names the worst row with its
  // properties (a wrong kernel pays the full check once; a correct one never gets here).
  ++fallbacks_;
  return judge_forward(problem_, inputs_, out, sample_rows_, seed_);
}

}  // namespace fl::tuner
