#include "numerics/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/parallel_for.hpp"
#include "numerics/compensated_sum.hpp"
#include "numerics/compensated_vector.hpp"

namespace fl::numerics {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

struct QueryRowResult {
  double lse = kMinusInfinity;
  double delta = 0.0;
};

// Forward (and dQ when `dq_out` is given) of query row r. `o_out` may be null when only the statistics
// (LSE and D) are wanted; D needs dO, and is computed whenever the inputs carry it.
QueryRowResult compute_query_row(AttentionInputs const& in, std::size_t r, double* o_out, double* dq_out) {
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  RowIndex const x = query_row_index(s, r);
  int const n_visible = visible_keys(s, x.pos);
  QueryRowResult result;
  if (o_out) std::fill(o_out, o_out + d, 0.0);
  if (dq_out) std::fill(dq_out, dq_out + d, 0.0);
  if (n_visible == 0) return result;

  double const scale = s.scale();
  double const* q = in.q.data() + r * d;
  double const* keys = in.k.data() + first_key_row_for_query(s, r) * d;
  double const* values = in.v.data() + first_key_row_for_query(s, r) * d;

  std::vector<double> scores(static_cast<std::size_t>(n_visible));
  for (int j = 0; j < n_visible; ++j) scores[std::size_t(j)] = scale * dot(q, keys + std::size_t(j) * d, d);
  double const row_max = *std::max_element(scores.begin(), scores.end());
  CompensatedSum denominator;
  for (double& sc : scores) {
    sc = std::exp(sc - row_max);  // unnormalised weight
    denominator.add(sc);
  }
  double const l = denominator.value();
  result.lse = row_max + std::log(l);
  for (double& sc : scores) sc /= l;  // now P_ij
  std::vector<double> const& p = scores;

  if (o_out) {
    CompensatedVector o(d);
    for (int j = 0; j < n_visible; ++j) o.add_scaled(p[std::size_t(j)], values + std::size_t(j) * d);
    o.write_to({o_out, d});
  }
  if (!in.has_backward()) return result;

  double const* d_o = in.d_o.data() + r * d;
  std::vector<double> dp(static_cast<std::size_t>(n_visible));
  CompensatedSum delta;
  for (int j = 0; j < n_visible; ++j) {
    dp[std::size_t(j)] = dot(d_o, values + std::size_t(j) * d, d);
    delta.add(p[std::size_t(j)] * dp[std::size_t(j)]);
  }
  result.delta = delta.value();
  if (dq_out) {
    CompensatedVector dq(d);
    for (int j = 0; j < n_visible; ++j) {
      double const ds = p[std::size_t(j)] * (dp[std::size_t(j)] - result.delta);
      dq.add_scaled(ds, keys + std::size_t(j) * d);
    }
    dq.write_to({dq_out, d}, scale);
  }
  return result;
}

// dK and dV of key row c, given LSE and D of every query row (indexed by flat query row).
void compute_key_row(AttentionInputs const& in, std::size_t c, std::vector<double> const& lse,
                     std::vector<double> const& delta, double* dk_out, double* dv_out) {
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  RowIndex const x = key_row_index(s, c);
  double const scale = s.scale();
  double const* key = in.k.data() + c * d;
  double const* value = in.v.data() + c * d;
  CompensatedVector dk(d);
  CompensatedVector dv(d);
  // Queries that see key j: i >= j - (N_k - N_q) under bottom-right causal masking.
  std::int64_t const first_query =
      s.causal ? std::max<std::int64_t>(0, std::int64_t(x.pos) - s.causal_offset()) : std::int64_t(0);
  int const group = s.group_size();
  for (int hq = x.head * group; hq < (x.head + 1) * group; ++hq) {
    std::size_t const row0 = (std::size_t(x.batch) * s.heads_q + std::size_t(hq)) * s.seqlen_q;
    for (std::int64_t i = first_query; i < s.seqlen_q; ++i) {
      std::size_t const r = row0 + std::size_t(i);
      double const* q = in.q.data() + r * d;
      double const* d_o = in.d_o.data() + r * d;
      double const p = std::exp(scale * dot(q, key, d) - lse[r]);
      double const dp = dot(d_o, value, d);
      dv.add_scaled(p, d_o);
      dk.add_scaled(p * (dp - delta[r]), q);
    }
  }
  dk.write_to({dk_out, d}, scale);
  dv.write_to({dv_out, d});
}

// LSE and D of a block of query rows of one head, in one pass over the keys with an online softmax:
// each K_j and V_j row is loaded once for the whole block instead of once per row. At n = 16384 that is
// what turns the statistics pass from memory-bound (32 MB of K and V per row) into compute-bound.
constexpr std::size_t kStatisticsBlockRows = 8;

void compute_statistics_block(AttentionInputs const& in, std::size_t const* rows, std::size_t count,
                              std::vector<double>& lse, std::vector<double>& delta) {
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  double const scale = s.scale();
  std::size_t const k0 = first_key_row_for_query(s, rows[0]);
  double m[kStatisticsBlockRows];
  CompensatedSum l[kStatisticsBlockRows], dsum[kStatisticsBlockRows];
  int visible[kStatisticsBlockRows];
  int max_visible = 0;
  for (std::size_t r = 0; r < count; ++r) {
    m[r] = -std::numeric_limits<double>::infinity();
    visible[r] = visible_keys(s, query_row_index(s, rows[r]).pos);
    max_visible = std::max(max_visible, visible[r]);
  }
  for (int j = 0; j < max_visible; ++j) {
    double const* key = in.k.data() + (k0 + std::size_t(j)) * d;
    double const* value = in.v.data() + (k0 + std::size_t(j)) * d;
    for (std::size_t r = 0; r < count; ++r) {
      if (j >= visible[r]) continue;
      double const sc = scale * dot(in.q.data() + rows[r] * d, key, d);
      double const dp = in.has_backward() ? dot(in.d_o.data() + rows[r] * d, value, d) : 0.0;
      if (sc > m[r]) {
        double const f = std::exp(m[r] - sc);  // 0 on the first key
        l[r].scale(f);
        dsum[r].scale(f);
        m[r] = sc;
        l[r].add(1.0);
        dsum[r].add(dp);
      } else {
        double const e = std::exp(sc - m[r]);
        l[r].add(e);
        dsum[r].add(e * dp);
      }
    }
  }
  for (std::size_t r = 0; r < count; ++r) {
    if (visible[r] == 0) {
      lse[rows[r]] = kMinusInfinity;
      delta[rows[r]] = 0.0;
      continue;
    }
    lse[rows[r]] = m[r] + std::log(l[r].value());
    delta[rows[r]] = dsum[r].value() / l[r].value();
  }
}

void sort_unique(std::vector<std::size_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

RowSample RowSample::all(common::AttentionShape const& shape, bool with_key_rows) {
  RowSample sample;
  sample.query_rows.resize(fl::numerics::query_rows(shape));
  std::iota(sample.query_rows.begin(), sample.query_rows.end(), std::size_t(0));
  if (with_key_rows) {
    sample.key_rows.resize(fl::numerics::key_rows(shape));
    std::iota(sample.key_rows.begin(), sample.key_rows.end(), std::size_t(0));
  }
  return sample;
}

SampledOutputs reference_sampled(AttentionInputs const& in, RowSample sample,
                                 ReferenceOptions const& options) {
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  sort_unique(sample.query_rows);
  sort_unique(sample.key_rows);
  if (!in.has_backward()) sample.key_rows.clear();

  SampledOutputs ref;
  std::size_t const nq = sample.query_rows.size();
  ref.o.assign(nq * d, 0.0);
  ref.lse.assign(nq, kMinusInfinity);
  if (in.has_backward()) {
    ref.delta.assign(nq, 0.0);
    ref.dq.assign(nq * d, 0.0);
  }
  common::parallel_for(nq, options.threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      QueryRowResult const row = compute_query_row(in, sample.query_rows[t], ref.o.data() + t * d,
                                                   in.has_backward() ? ref.dq.data() + t * d : nullptr);
      ref.lse[t] = row.lse;
      if (in.has_backward()) ref.delta[t] = row.delta;
    }
  });

  if (!sample.key_rows.empty()) {
    // Statistics of every query row of the (batch, kv head) groups that the sampled key rows belong to.
    std::vector<double> lse(query_rows(s), std::numeric_limits<double>::quiet_NaN());
    std::vector<double> delta(query_rows(s), std::numeric_limits<double>::quiet_NaN());
    std::vector<char> needed(query_rows(s), 0);
    int const group = s.group_size();
    for (std::size_t c : sample.key_rows) {
      RowIndex const x = key_row_index(s, c);
      for (int hq = x.head * group; hq < (x.head + 1) * group; ++hq) {
        std::size_t const row0 = (std::size_t(x.batch) * s.heads_q + std::size_t(hq)) * s.seqlen_q;
        std::fill(needed.begin() + std::ptrdiff_t(row0), needed.begin() + std::ptrdiff_t(row0 + s.seqlen_q),
                  1);
      }
    }
    for (std::size_t t = 0; t < nq; ++t) {  // rows already computed exactly
      lse[sample.query_rows[t]] = ref.lse[t];
      delta[sample.query_rows[t]] = ref.delta[t];
      needed[sample.query_rows[t]] = 0;
    }
    // Blocks of up to kStatisticsBlockRows rows of one head (rows are sorted, so heads are contiguous).
    std::vector<std::pair<std::size_t, std::size_t>> blocks;  // [begin, end) into todo
    std::vector<std::size_t> todo;
    for (std::size_t r = 0; r < needed.size(); ++r)
      if (needed[r]) todo.push_back(r);
    for (std::size_t b = 0; b < todo.size();) {
      std::size_t e = b + 1;
      while (e < todo.size() && e - b < kStatisticsBlockRows &&
             todo[e] / std::size_t(s.seqlen_q) == todo[b] / std::size_t(s.seqlen_q))
        ++e;
      blocks.emplace_back(b, e);
      b = e;
    }
    common::parallel_for(blocks.size(), options.threads, [&](std::size_t begin, std::size_t end) {
      for (std::size_t t = begin; t < end; ++t)
        compute_statistics_block(in, todo.data() + blocks[t].first, blocks[t].second - blocks[t].first, lse,
                                 delta);
    });
    std::size_t const nk = sample.key_rows.size();
    ref.dk.assign(nk * d, 0.0);
    ref.dv.assign(nk * d, 0.0);
    common::parallel_for(nk, options.threads, [&](std::size_t begin, std::size_t end) {
      for (std::size_t t = begin; t < end; ++t)
        compute_key_row(in, sample.key_rows[t], lse, delta, ref.dk.data() + t * d, ref.dv.data() + t * d);
    });
    ref.all_lse = std::move(lse);
    ref.all_delta = std::move(delta);
  }
  ref.sample = std::move(sample);
  return ref;
}

AttentionOutputs reference_attention(AttentionInputs const& in, ReferenceOptions const& options) {
  SampledOutputs ref = reference_sampled(in, RowSample::all(in.shape, in.has_backward()), options);
  AttentionOutputs out;
  out.o = std::move(ref.o);
  out.lse = std::move(ref.lse);
  out.dq = std::move(ref.dq);
  out.dk = std::move(ref.dk);
  out.dv = std::move(ref.dv);
  return out;
}

}  // namespace fl::numerics
