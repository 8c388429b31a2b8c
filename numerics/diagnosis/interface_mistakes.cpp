#include "numerics/diagnosis/interface_mistakes.hpp"

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
#include "numerics/diagnosis/interface_comparison.hpp"
#include "numerics/diagnosis/match_error.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics::diagnosis {

namespace interface_detail {

SampledOutputs reference_on(AttentionInputs in, std::vector<std::size_t> const& rows, int threads) {
  in.d_o.clear();  // the forward only
  RowSample sample;
  sample.query_rows = rows;
  return reference_sampled(in, sample, ReferenceOptions{threads});
}

// Match of `observed` (O and, when given, LSE) against a packed reference on the compared rows.
MatchError match_forward(Comparison const& c, std::vector<double> const& observed_o,
                         std::vector<double> const& observed_lse, SampledOutputs const& ref) {
  std::size_t const d = static_cast<std::size_t>(c.in.shape.head_dim);
  MatchError e = match_packed(observed_o, ref.o, d, c.rows, false);
  if (!observed_lse.empty()) e = combine(e, match_packed(observed_lse, ref.lse, 1, c.rows, true));
  return e;
}

void name_if_far_better(Comparison const& c, MatchError const& hypothesis, MatchError const& correct,
                        std::string id, std::string what, std::string fix,
                        std::vector<fl::numerics::DiagnosisEntry>& out) {
  // A correct kernel called the wrong way makes no NaN: the hypothesis must reproduce every non-finite row
  // (an empty row's -inf LSE), not merely more of them than the reference does.
  if (hypothesis.mismatched_rows > 0 || !far_better(hypothesis, correct)) return;
  fl::numerics::DiagnosisEntry e;
  e.id = std::move(id);
  e.kind = "interface";
  e.evidence = what + ": a float64 reference of that reproduces the observation to " +
               scientific(hypothesis.worst_row_error) + " (worst of " + std::to_string(c.rows.size()) +
               " compared rows, relative to a typical row) where the reference misses by " +
               scientific(correct.worst_row_error) +
               (correct.mismatched_rows > hypothesis.mismatched_rows
                    ? " and " + std::to_string(correct.mismatched_rows) + " NaN/inf rows"
                    : std::string());
  e.fix = std::move(fix);
  e.match_error = ranking_error(hypothesis);
  e.strength = lead_over(hypothesis, correct);
  out.push_back(std::move(e));
}

}  // namespace interface_detail

namespace {

using namespace interface_detail;

// A hypothesis that changes what the kernel computed: inputs (and shape) as the kernel saw them.
void try_inputs(Comparison const& c, AttentionInputs const& as_computed, std::string id, std::string what,
                std::string fix, std::vector<fl::numerics::DiagnosisEntry>& out) {
  SampledOutputs const ref = reference_on(as_computed, c.rows, c.threads);
  name_if_far_better(c, match_forward(c, c.observed.o, c.observed.lse, ref), c.correct, std::move(id),
                     std::move(what), std::move(fix), out);
}

// K and V expanded to one head per query head, query head h reading key/value head h % H_kv.
AttentionInputs interleaved_heads(AttentionInputs in) {
  common::AttentionShape const s = in.shape;
  std::size_t const per_head = std::size_t(s.seqlen_k) * s.head_dim;
  std::vector<double> k(std::size_t(s.batch) * s.heads_q * per_head), v(k.size());
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads_q; ++h) {
      std::size_t const src = (std::size_t(b) * s.heads_kv + std::size_t(h % s.heads_kv)) * per_head;
      std::size_t const dst = (std::size_t(b) * s.heads_q + std::size_t(h)) * per_head;
      std::copy_n(in.k.begin() + std::ptrdiff_t(src), per_head, k.begin() + std::ptrdiff_t(dst));
      std::copy_n(in.v.begin() + std::ptrdiff_t(src), per_head, v.begin() + std::ptrdiff_t(dst));
    }
  in.k = std::move(k);
  in.v = std::move(v);
  in.shape.heads_kv = s.heads_q;
  return in;
}

}  // namespace

std::vector<double> from_bnhd_memory(std::vector<double> const& t, int batch, int heads, int seqlen,
                                     int dim) {
  std::vector<double> out(t.size());
  for (int b = 0; b < batch; ++b)
    for (int n = 0; n < seqlen; ++n)
      for (int h = 0; h < heads; ++h)
        std::copy_n(t.begin() + std::ptrdiff_t(((std::size_t(b) * seqlen + n) * heads + h) * dim), dim,
                    out.begin() + std::ptrdiff_t(((std::size_t(b) * heads + h) * seqlen + n) * dim));
  return out;
}

std::vector<fl::numerics::DiagnosisEntry> diagnose_interface(
    AttentionInputs const& in, AttentionOutputs const& observed,
    std::vector<std::size_t> const& failing_query_rows, int threads, std::vector<std::string>* declined) {
  common::AttentionShape const& s = in.shape;
  Comparison c{
      in,      observed, compared_query_rows(query_rows(s), failing_query_rows, kInterfaceRowsCompared),
      threads, declined, {},
      {},      {},       {}};
  SampledOutputs const ref = reference_on(in, c.rows, threads);
  c.reference_o = ref.o;
  c.reference_lse = ref.lse;
  c.correct = match_forward(c, observed.o, observed.lse, ref);
  if (!observed.lse.empty()) c.correct_lse = match_packed(observed.lse, ref.lse, 1, c.rows, true);
  std::vector<fl::numerics::DiagnosisEntry> out;

  if (s.causal && s.seqlen_q != s.seqlen_k) {
    AttentionInputs other = in;
    other.shape.causal_top_left = !s.causal_top_left;
    if (!s.causal_top_left)
      try_inputs(c, other, "causal-top-left",
                 "the causal mask is aligned top-left (query i sees keys j <= i, PyTorch's is_causal=True), "
                 "not bottom-right",
                 "check it as such with fa-check --causal-align top-left; for FlashAttention's bottom-right "
                 "convention call SDPA with is_causal=False and "
                 "attn_mask=torch.nn.attention.bias.causal_lower_right(N_q, N_k)",
                 out);
    else
      try_inputs(
          c, other, "causal-bottom-right",
          "the causal mask is aligned bottom-right (query i sees keys j <= i + N_k - N_q, FlashAttention "
          "2.1+), not top-left",
          "check it with fa-check's default --causal-align bottom-right", out);
  }
  {
    AttentionInputs other = in;
    other.shape.causal = !s.causal;
    other.shape.causal_top_left = false;
    try_inputs(c, other, s.causal ? "causal-mask-missing" : "causal-flag-missing",
               s.causal ? "the output is non-causal: the kernel ran without its causal mask"
                        : "the output is causal (bottom-right aligned) but fa-check was not told",
               s.causal ? "pass the causal flag to the kernel (is_causal=True / causal=True)"
                        : "add --causal to the fa-check command",
               out);
  }
  double const expected_scale = s.scale();
  for (double candidate : {1.0 / double(s.head_dim), 1.0, 1.0 / std::sqrt(double(s.head_dim))}) {
    if (std::abs(candidate - expected_scale) <= 1e-9 * expected_scale) continue;
    AttentionInputs other = in;
    other.shape.softmax_scale = candidate;
    bool const one = candidate == 1.0, over_d = candidate == 1.0 / double(s.head_dim);
    std::ostringstream what;
    what << "the scores were multiplied by "
         << (one      ? "1"
             : over_d ? "1/D"
                      : "1/sqrt(D)")
         << " = " << candidate << " instead of the scale fa-check assumed, " << expected_scale;
    try_inputs(c, other,
               one      ? "missing-scale"
               : over_d ? "scale-1-over-d"
                        : "scale-default",
               what.str(),
               one ? "multiply the scores by softmax_scale = 1/sqrt(D) (or, if a scale of 1 is meant, "
                     "check with --scale 1)"
               : over_d
                   ? "use softmax_scale = 1/sqrt(D), not 1/D (or check with --scale 1/D if meant)"
                   : "the kernel used the default 1/sqrt(D): drop --scale, or pass the scale to the kernel",
               out);
  }
  if (s.seqlen_k > 0) {
    AttentionInputs other = in;
    std::swap(other.k, other.v);
    try_inputs(c, other, "kv-swapped", "the kernel was handed V as K and K as V",
               "swap the K and V arguments of the call", out);
  }
  if (s.heads_q > s.heads_kv && s.heads_kv > 1)
    try_inputs(
        c, interleaved_heads(in), "gqa-interleaved",
        "query head h read key/value head h % H_kv (interleaved) instead of h / (H_q / H_kv) (grouped)",
        "map query heads to key/value heads in groups (repeat_interleave, not repeat / tile)", out);
  if (s.heads_q > 1 && s.seqlen_q > 1) {
    // The output's memory is (B, N, H, D) though its shape says (B, H, N, D).
    std::vector<double> const o_true =
        from_bnhd_memory(observed.o, s.batch, s.heads_q, s.seqlen_q, s.head_dim);
    // LSE keeps its (B, H, N) layout: kernels return it so (FlashAttention's softmax_lse), whatever O's is.
    std::vector<double> const& lse_true = observed.lse;
    name_if_far_better(c, match_forward(c, o_true, lse_true, ref), c.correct, "layout-bnhd",
                       "the output is laid out (B, N, H, D) under a (B, H, N, D) shape",
                       "transpose the output to (B, H, N, D) before saving it (o.transpose(1, 2) in "
                       "PyTorch, not reshape/view)",
                       out);
    if (s.heads_q == s.heads_kv && s.seqlen_q == s.seqlen_k) {
      AttentionInputs other = in;
      other.q = from_bnhd_memory(in.q, s.batch, s.heads_q, s.seqlen_q, s.head_dim);
      other.k = from_bnhd_memory(in.k, s.batch, s.heads_kv, s.seqlen_k, s.head_dim);
      other.v = from_bnhd_memory(in.v, s.batch, s.heads_kv, s.seqlen_k, s.head_dim);
      // The kernel's output is (B, N, H, D) too: compare it in that order.
      SampledOutputs const r2 = reference_on(other, c.rows, threads);
      name_if_far_better(
          c, match_forward(c, o_true, lse_true, r2), c.correct, "layout-bnhd",
          "every tensor is laid out (B, N, H, D) under a (B, H, N, D) shape",
          "transpose Q, K, V and O to (B, H, N, D) (x.transpose(1, 2) in PyTorch) before saving", out);
    }
  }
  if (!observed.lse.empty()) {
    std::vector<double> lse_natural = observed.lse;
    for (double& x : lse_natural) x *= std::numbers::ln2;
    // O must be right too: the hypothesis is "the reference's O, and its LSE in log2".
    MatchError const e = combine(match_packed(observed.o, ref.o, std::size_t(s.head_dim), c.rows, false),
                                 match_packed(lse_natural, ref.lse, 1, c.rows, true));
    name_if_far_better(
        c, e, c.correct, "lse-log2",
        "LSE is in log2 units (log2 of the softmax denominator), fa-check expects the natural log",
        "multiply the LSE by ln 2 (0.6931) before saving it", out);
  }
  try_wrong_head(c, out);
  if (out.empty()) try_dropout(c, out);
  return out;
}

}  // namespace fl::numerics::diagnosis
