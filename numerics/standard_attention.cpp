#include "numerics/standard_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/parallel_for.hpp"
#include "numerics/precision.hpp"
#include "numerics/quantized_operands.hpp"

namespace fl::numerics {

namespace {

float dot_f32(float const* a, float const* b, std::size_t n) {
  float acc = 0.0f;
  for (std::size_t e = 0; e < n; ++e) acc += a[e] * b[e];
  return acc;
}

struct RowSoftmax {
  float m = 0.0f;
  float l = 0.0f;
  float lse = -std::numeric_limits<float>::infinity();
  int visible = 0;
};

class StandardAttention {
 public:
  StandardAttention(AttentionInputs const& in, PrecisionRecipe const& recipe)
      : s_(in.shape), r_(recipe), x_(quantize_operands(in, recipe)), d_(std::size_t(in.shape.head_dim)) {}

  float score(std::size_t row, std::size_t key_row) const {
    float const raw = dot_f32(x_.q.data() + row * d_, x_.k.data() + key_row * d_, d_);
    return round_score(r_, raw * (x_.q_descale[row] * x_.k_descale[key_row]) * float(s_.scale()));
  }

  // The row's softmax statistics; `scores`, when given, receives the row's scores (computed once).
  RowSoftmax softmax_stats(std::size_t row, std::vector<float>* scores = nullptr) const {
    RowSoftmax st;
    st.visible = visible_keys(s_, query_row_index(s_, row).pos);
    if (st.visible == 0) return st;
    std::size_t const k0 = first_key_row_for_query(s_, row);
    std::vector<float> local;
    std::vector<float>& sc = scores ? *scores : local;
    sc.resize(std::size_t(st.visible));
    st.m = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < st.visible; ++j) {
      sc[std::size_t(j)] = score(row, k0 + std::size_t(j));
      st.m = std::max(st.m, sc[std::size_t(j)]);
    }
    for (float x : sc) st.l += std::exp(x - st.m);
    st.lse = st.m + std::log(st.l);
    return st;
  }

  float stored_probability(RowSoftmax const& st, std::size_t row, std::size_t key_row) const {
    return round_probability(r_, std::exp(score(row, key_row) - st.m) / st.l);
  }

  // O (rounded), LSE; and, with dO, D (from the rounded O) and dQ.
  void query_row(std::size_t row, double* o_out, double& lse_out, double* delta_out, double* dq_out) const {
    std::vector<float> scores;
    RowSoftmax const st = softmax_stats(row, &scores);
    std::fill(o_out, o_out + d_, 0.0);
    if (dq_out) std::fill(dq_out, dq_out + d_, 0.0);
    lse_out = double(st.lse);
    if (delta_out) *delta_out = 0.0;
    if (st.visible == 0) return;
    std::size_t const k0 = first_key_row_for_query(s_, row);
    std::vector<float> p(static_cast<std::size_t>(st.visible));
    std::vector<float> acc(d_, 0.0f);
    for (int j = 0; j < st.visible; ++j) {
      std::size_t const kr = k0 + std::size_t(j);
      p[std::size_t(j)] = round_probability(r_, std::exp(scores[std::size_t(j)] - st.m) / st.l);
      float const w = p[std::size_t(j)] * x_.v_descale[kr];
      for (std::size_t e = 0; e < d_; ++e) acc[e] += w * x_.v[kr * d_ + e];
    }
    std::vector<float> o(d_);
    for (std::size_t e = 0; e < d_; ++e) o[e] = round_to(r_.outputs, acc[e]);
    for (std::size_t e = 0; e < d_; ++e) o_out[e] = double(o[e]);
    if (!delta_out || x_.d_o.empty()) return;

    float const do_descale = x_.d_o_descale[row];
    float delta = 0.0f;
    for (std::size_t e = 0; e < d_; ++e) delta += x_.d_o[row * d_ + e] * do_descale * o[e];
    *delta_out = double(delta);
    if (!dq_out) return;
    std::vector<float> dq(d_, 0.0f);
    for (int j = 0; j < st.visible; ++j) {
      std::size_t const kr = k0 + std::size_t(j);
      float const dp =
          dot_f32(x_.d_o.data() + row * d_, x_.v.data() + kr * d_, d_) * (do_descale * x_.v_descale[kr]);
      float const ds = round_to(r_.score_gradients, p[std::size_t(j)] * (dp - delta)) * x_.k_descale[kr];
      for (std::size_t e = 0; e < d_; ++e) dq[e] += ds * x_.k[kr * d_ + e];
    }
    finish_gradient(dq, float(s_.scale()), dq_out);
  }

  void key_row(std::size_t kr, std::vector<RowSoftmax> const& stats, std::vector<double> const& delta,
               double* dk_out, double* dv_out) const {
    RowIndex const x = key_row_index(s_, kr);
    std::vector<float> dk(d_, 0.0f);
    std::vector<float> dv(d_, 0.0f);
    std::int64_t const first_query =
        s_.causal ? std::max<std::int64_t>(0, std::int64_t(x.pos) - s_.causal_offset()) : std::int64_t(0);
    int const group = s_.group_size();
    for (int hq = x.head * group; hq < (x.head + 1) * group; ++hq) {
      std::size_t const row0 = (std::size_t(x.batch) * s_.heads_q + std::size_t(hq)) * s_.seqlen_q;
      for (std::int64_t i = first_query; i < s_.seqlen_q; ++i) {
        std::size_t const row = row0 + std::size_t(i);
        float const p = stored_probability(stats[row], row, kr);
        float const do_descale = x_.d_o_descale[row];
        float const dp =
            dot_f32(x_.d_o.data() + row * d_, x_.v.data() + kr * d_, d_) * (do_descale * x_.v_descale[kr]);
        float const ds = round_to(r_.score_gradients, p * (dp - float(delta[row]))) * x_.q_descale[row];
        for (std::size_t e = 0; e < d_; ++e) {
          dv[e] += p * do_descale * x_.d_o[row * d_ + e];
          dk[e] += ds * x_.q[row * d_ + e];
        }
      }
    }
    finish_gradient(dk, float(s_.scale()), dk_out);
    finish_gradient(dv, 1.0f, dv_out);
  }

 private:
  // Scale, rotate back when Q and K were rotated (only dQ and dK ever see a scale != 1 here, and only
  // they are taken against rotated operands), round to the output precision.
  void finish_gradient(std::vector<float> const& acc, float scale, double* out) const {
    std::vector<double> g(d_);
    for (std::size_t e = 0; e < d_; ++e) g[e] = double(acc[e] * scale);
    if (x_.transform && scale != 1.0f) apply_incoherent_inverse(*x_.transform, g);
    for (std::size_t e = 0; e < d_; ++e) out[e] = double(round_to(r_.outputs, float(g[e])));
  }

  common::AttentionShape s_;
  PrecisionRecipe r_;
  QuantizedOperands x_;
  std::size_t d_;

 public:
  common::AttentionShape const& shape() const { return s_; }
};

}  // namespace

SampledOutputs standard_attention_sampled(AttentionInputs const& in, PrecisionRecipe const& recipe,
                                          RowSample sample, int threads) {
  StandardAttention const sa(in, recipe);
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  std::sort(sample.query_rows.begin(), sample.query_rows.end());
  sample.query_rows.erase(std::unique(sample.query_rows.begin(), sample.query_rows.end()),
                          sample.query_rows.end());
  std::sort(sample.key_rows.begin(), sample.key_rows.end());
  sample.key_rows.erase(std::unique(sample.key_rows.begin(), sample.key_rows.end()), sample.key_rows.end());
  bool const backward = in.has_backward();
  if (!backward) sample.key_rows.clear();

  SampledOutputs out;
  std::size_t const nq = sample.query_rows.size();
  out.o.assign(nq * d, 0.0);
  out.lse.assign(nq, 0.0);
  if (backward) {
    out.delta.assign(nq, 0.0);
    out.dq.assign(nq * d, 0.0);
  }
  common::parallel_for(nq, threads, [&](std::size_t b, std::size_t e) {
    for (std::size_t t = b; t < e; ++t)
      sa.query_row(sample.query_rows[t], out.o.data() + t * d, out.lse[t], backward ? &out.delta[t] : nullptr,
                   backward ? out.dq.data() + t * d : nullptr);
  });
  if (!sample.key_rows.empty()) {
    // Softmax statistics and D of every query row (D from the rounded O, as the backward reads it).
    std::size_t const rows = query_rows(s);
    std::vector<RowSoftmax> stats(rows);
    std::vector<double> delta(rows, 0.0);
    std::vector<char> done(rows, 0);
    for (std::size_t t = 0; t < nq; ++t) {
      delta[sample.query_rows[t]] = out.delta[t];
      done[sample.query_rows[t]] = 1;
    }
    common::parallel_for(rows, threads, [&](std::size_t b, std::size_t e) {
      std::vector<double> o(d);
      double lse = 0.0;
      for (std::size_t row = b; row < e; ++row) {
        stats[row] = sa.softmax_stats(row);
        if (!done[row]) sa.query_row(row, o.data(), lse, &delta[row], nullptr);
      }
    });
    std::size_t const nk = sample.key_rows.size();
    out.dk.assign(nk * d, 0.0);
    out.dv.assign(nk * d, 0.0);
    common::parallel_for(nk, threads, [&](std::size_t b, std::size_t e) {
      for (std::size_t t = b; t < e; ++t)
        sa.key_row(sample.key_rows[t], stats, delta, out.dk.data() + t * d, out.dv.data() + t * d);
    });
  }
  out.sample = std::move(sample);
  return out;
}

AttentionOutputs standard_attention(AttentionInputs const& in, PrecisionRecipe const& recipe, int threads) {
  SampledOutputs r =
      standard_attention_sampled(in, recipe, RowSample::all(in.shape, in.has_backward()), threads);
  AttentionOutputs out;
  out.o = std::move(r.o);
  out.lse = std::move(r.lse);
  out.dq = std::move(r.dq);
  out.dk = std::move(r.dk);
  out.dv = std::move(r.dv);
  return out;
}

}  // namespace fl::numerics
