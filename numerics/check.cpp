#include "numerics/check.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "numerics/seeded_random.hpp"
#include "numerics/standard_attention.hpp"

namespace fl::numerics {

namespace {

constexpr std::size_t kMaxDiagnosedRowProperties = 64;
constexpr int kStructuralEdgeRows = 2;  // first and last rows of every head

bool finite_row(std::vector<double> const& t, std::size_t row, std::size_t len) {
  if (t.empty()) return true;
  for (std::size_t e = 0; e < len; ++e)
    if (!std::isfinite(t[row * len + e])) return false;
  return true;
}

// Rows every sample holds: the first and last of each head, the causal boundary (first rows that see a
// key) and every fully masked row.
void add_structural_query_rows(AttentionShape const& s, std::vector<std::size_t>& rows) {
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

// Cheap screen of every row: non-finite outputs, and O outside the range of the values it averages (any
// softmax-weighted mean of V lies inside it, whatever the precision, up to the output's rounding).
std::size_t add_screened_rows(AttentionInputs const& in, AttentionOutputs const& obs,
                              PrecisionRecipe const& r, std::vector<std::size_t>& rows) {
  AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  std::size_t added = 0;
  double const slack = 2.0 * unit_roundoff(r.outputs) + unit_roundoff(r.probabilities);
  for (std::size_t bh = 0; bh < std::size_t(s.batch) * s.heads_q; ++bh) {
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
      if (flag) {
        rows.push_back(row);
        ++added;
      }
    }
  }
  return added;
}

void sort_unique(std::vector<std::size_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

RowSample choose_sample(AttentionInputs const& in, AttentionOutputs const& obs, CheckOptions const& o,
                        PrecisionRecipe const& recipe, CheckResult& result) {
  AttentionShape const& s = in.shape;
  double const work = double(s.batch) * s.heads_q * s.seqlen_q * double(s.seqlen_k) * s.head_dim;
  bool const full = o.force_full || (o.sample_rows == 0 && work <= kFullCheckWork);
  if (full) return RowSample::all(s, in.has_backward());
  result.sampled = true;
  RowSample sample;
  add_structural_query_rows(s, sample.query_rows);
  result.screened_rows = add_screened_rows(in, obs, recipe, sample.query_rows);
  SeededRandom rng(o.sample_seed);
  std::size_t const total_q = query_rows(s);
  std::size_t const want_q = o.sample_rows ? o.sample_rows : kDefaultSampleRows;
  for (std::size_t t = 0; t < want_q; ++t)
    sample.query_rows.push_back(std::size_t(rng.uniform() * double(total_q)));
  if (in.has_backward()) {
    std::size_t const d = std::size_t(s.head_dim);
    for (std::size_t h = 0; h < std::size_t(s.batch) * s.heads_kv; ++h) {
      std::size_t const base = h * std::size_t(s.seqlen_k);
      for (int j = 0; j < kStructuralEdgeRows && j < s.seqlen_k; ++j) {
        sample.key_rows.push_back(base + std::size_t(j));
        sample.key_rows.push_back(base + std::size_t(s.seqlen_k - 1 - j));
      }
    }
    for (std::size_t c = 0; c < key_rows(s); ++c)
      if (!finite_row(obs.dk, c, d) || !finite_row(obs.dv, c, d)) sample.key_rows.push_back(c);
    std::size_t const want_k = o.sample_key_rows ? o.sample_key_rows : kDefaultSampleKeyRows;
    for (std::size_t t = 0; t < want_k; ++t)
      sample.key_rows.push_back(std::size_t(rng.uniform() * double(key_rows(s))));
  }
  sort_unique(sample.query_rows);
  sort_unique(sample.key_rows);
  return sample;
}

std::string describe_key_row(AttentionShape const& s, std::size_t c, int block_n) {
  RowIndex const x = key_row_index(s, c);
  std::ostringstream out;
  out << "key row " << c << " (b" << x.batch << " h_kv" << x.head << " j" << x.pos << "): key block "
      << x.pos / block_n << " of " << (s.seqlen_k + block_n - 1) / block_n << " for kBlockN " << block_n;
  if (x.pos / block_n == (s.seqlen_k - 1) / block_n && s.seqlen_k % block_n != 0)
    out << ", in the partial tail block";
  if (s.causal) {
    std::int64_t const first = std::max<std::int64_t>(0, x.pos - s.causal_offset());
    out << ", seen by query rows " << first << ".." << s.seqlen_q - 1;
  }
  return out.str();
}

void collect_worst_rows(AttentionInputs const& in, CheckOptions const& o, CheckResult& r) {
  std::vector<WorstRow> all;
  for (std::size_t k = 0; k < r.judgement.outputs.size(); ++k) {
    OutputJudgement const& oj = r.judgement.outputs[k];
    if (!oj.checked) continue;
    bool const key = k >= 3;
    auto const& rows = key ? r.reference.sample.key_rows : r.reference.sample.query_rows;
    for (std::size_t t = 0; t < rows.size(); ++t) {
      WorstRow w;
      w.output = oj.name;
      w.row = rows[t];
      w.index = key ? key_row_index(in.shape, rows[t]) : query_row_index(in.shape, rows[t]);
      w.max_error = oj.row_max_error[t];
      w.ratio = oj.row_max_ratio[t];
      all.push_back(w);
    }
  }
  std::size_t const keep = std::min(o.worst_rows_listed, all.size());
  std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(keep), all.end(),
                    [](WorstRow const& a, WorstRow const& b) { return a.ratio > b.ratio; });
  all.resize(keep);
  for (WorstRow& w : all)
    w.properties = (w.output == "dK" || w.output == "dV")
                       ? describe_key_row(in.shape, w.row, o.report_block_n)
                       : describe(row_properties(in, w.row), o.report_block_n);
  r.worst_rows = std::move(all);
}

void cross_check_baseline(AttentionInputs const& in, CheckResult& r, int threads) {
  RowSample sample = r.reference.sample;
  if (r.sampled) sample.key_rows.clear();  // the baseline's dK/dV would need every row's statistics
  SampledOutputs const base = standard_attention_sampled(in, r.recipe, sample, threads);
  BaselineCrossCheck& b = r.baseline;
  b.done = true;
  std::vector<double> const* refs[] = {&r.reference.o, &r.reference.lse, &r.reference.dq, &r.reference.dk,
                                       &r.reference.dv};
  std::vector<double> const* bases[] = {&base.o, &base.lse, &base.dq, &base.dk, &base.dv};
  std::vector<double> const* taus[] = {&r.bounds.o, &r.bounds.lse, &r.bounds.dq, &r.bounds.dk, &r.bounds.dv};
  for (int k = 0; k < 5; ++k) {
    std::vector<double> x = *bases[k];
    std::vector<double> const& ref = *refs[k];
    if (x.size() != ref.size() || x.empty()) {
      b.metrics.emplace_back();
      b.above_bound.push_back(0);
      b.bound_over_error.push_back(0.0);
      continue;
    }
    for (std::size_t i = 0; i < x.size(); ++i)  // masked rows: -inf == -inf
      if (std::isinf(ref[i]) && std::isinf(x[i])) x[i] = ref[i];
    ErrorMetrics const m = compute_metrics(x, ref);
    std::size_t above = 0;
    double tau_sq = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (element_error(x[i], ref[i]) > (*taus[k])[i]) ++above;
      if (std::isfinite((*taus[k])[i])) tau_sq += (*taus[k])[i] * (*taus[k])[i];
    }
    b.metrics.push_back(m);
    b.above_bound.push_back(above);
    b.bound_over_error.push_back(m.rmse > 0.0 ? std::sqrt(tau_sq / double(x.size())) / m.rmse : 0.0);
  }
}

}  // namespace

std::string causal_convention(AttentionShape const& s) {
  if (!s.causal) return "non-causal (every query sees every key)";
  std::ostringstream out;
  if (s.causal_top_left)
    out << "causal, top-left aligned (--causal-align top-left, PyTorch's is_causal=True): query i sees key j "
           "when j <= i";
  else
    out << "causal, bottom-right aligned: query i sees key j when j <= i + (N_k - N_q) = i + "
        << s.causal_offset();
  if (s.causal_offset() < 0)
    out << "; query rows 0.." << -s.causal_offset() - 1 << " see no key (O = 0, LSE = -inf)";
  return out.str();
}

CheckResult run_check(AttentionInputs const& inputs, AttentionOutputs const& observed,
                      CheckOptions const& options, Diagnoser const& diagnoser) {
  CheckResult r;
  AttentionShape const& s = inputs.shape;
  r.recipe = options.use_custom_recipe ? options.recipe : recipe_for(options.claimed);
  r.causal_convention = causal_convention(s);
  r.total_query_rows = query_rows(s);
  r.total_key_rows = inputs.has_backward() ? key_rows(s) : 0;
  r.inputs_exact = !is_fp8(r.recipe.claimed) && inputs_representable(inputs, r.recipe.operands);
  if (!r.inputs_exact && !is_fp8(r.recipe.claimed))
    r.notes.push_back(std::string("inputs are not all representable in ") +
                      std::string(name(r.recipe.claimed)) +
                      ": the bound includes the kernel's own rounding of Q, K, V, dO");
  if (is_fp8(r.recipe.claimed))
    r.notes.push_back(
        "FP8: the bound allows FP8 quantisation of Q, K, V, dO with any per-tensor or per-block "
        "scaling, with or without incoherent processing; P with FlashAttention-3's 2^8 offset; O, dQ, "
        "dK, dV written in bf16");

  RowSample const sample = choose_sample(inputs, observed, options, r.recipe, r);
  r.reference = reference_sampled(inputs, sample, {options.threads});
  ToleranceOptions tol;
  tol.kappa = options.kappa;
  tol.inputs_exact = r.inputs_exact;
  tol.threads = options.threads;
  tol.approximate_unsampled_row_stats = r.sampled && inputs.has_backward();
  tol.reference = &r.reference;
  r.approximate_key_stats = tol.approximate_unsampled_row_stats;
  if (r.approximate_key_stats)
    r.notes.push_back(
        "dK/dV bounds on sampled key rows use, for unsampled query rows, the largest LSE and D "
        "variances of the sampled rows of the same head (a heuristic that keeps the check fast)");
  r.bounds = tolerance_bounds(inputs, r.reference.sample, r.recipe, tol);
  r.judgement = judge(s, r.reference, r.bounds, observed);
  r.pass = r.judgement.pass;
  r.checked_query_rows = r.reference.sample.query_rows.size();
  r.checked_key_rows = r.reference.sample.key_rows.size();
  if (r.sampled)
    r.notes.push_back("sampled: " + std::to_string(r.checked_query_rows) + " of " +
                      std::to_string(r.total_query_rows) + " query rows (" + std::to_string(r.screened_rows) +
                      " flagged by the screen of every row: non-finite, or O outside the range of V)" +
                      (inputs.has_backward() ? ", " + std::to_string(r.checked_key_rows) + " of " +
                                                   std::to_string(r.total_key_rows) + " key rows"
                                             : std::string()));
  collect_worst_rows(inputs, options, r);
  if (options.cross_check_baseline) cross_check_baseline(inputs, r, options.threads);
  if (r.baseline.done)
    for (std::size_t k = 0; k < r.baseline.above_bound.size(); ++k)
      if (r.baseline.above_bound[k] > 0)
        r.notes.push_back("warning: standard attention in the same precision exceeds the bound on " +
                          std::to_string(r.baseline.above_bound[k]) + " elements of " +
                          r.judgement.outputs[k].name +
                          ": the tolerance model may be too tight for these inputs");
  if (!r.pass && diagnoser) {
    std::vector<RowProperties> props;
    for (std::size_t row : r.judgement.failing_query_rows) {
      if (props.size() >= kMaxDiagnosedRowProperties) break;
      props.push_back(row_properties(inputs, row));
    }
    DiagnosisRequest const request{
        inputs, observed, r.recipe, r.reference, r.judgement.failing_query_rows, r.judgement.failing_key_rows,
        props};
    r.diagnosis = diagnoser(request);
    std::sort(r.diagnosis.begin(), r.diagnosis.end(),
              [](DiagnosisEntry const& a, DiagnosisEntry const& b) { return a.match_error < b.match_error; });
  }
  return r;
}

}  // namespace fl::numerics
