#include "numerics/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "common/parallel_for.hpp"
#include "numerics/compensated_sum.hpp"
#include "numerics/compensated_vector.hpp"
#include "numerics/reference_rows.hpp"

namespace fl::numerics {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

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

// Runs compute_query_block over `rows` (sorted) in parallel; targets_of(t) names where rows[t] goes.
template <class Targets>
void for_query_blocks(AttentionInputs const& in, std::vector<std::size_t> const& rows, int threads,
                      Targets const& targets_of, OutputSum o_sum, std::atomic<bool> const* cancel = nullptr) {
  auto const blocks = query_blocks(in.shape, rows);
  KeyTiles const tiles(in, rows, threads);
  common::parallel_for(blocks.size(), threads, [&](std::size_t begin, std::size_t end) {
    QueryRowTargets targets[kReferenceBlockRows];
    for (std::size_t b = begin; b < end; ++b) {
      if (cancel && cancel->load(std::memory_order_relaxed)) throw ReferenceCancelled();
      auto const [first, last] = blocks[b];
      for (std::size_t t = first; t < last; ++t) targets[t - first] = targets_of(t);
      compute_query_block(in, tiles, rows.data() + first, targets, last - first, o_sum);
    }
  });
}

bool same_bits(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// The caller's statistics, after checking that they cover every row and agree with the sampled rows'.
RowStatistics const& checked_statistics(AttentionInputs const& in, SampledOutputs const& ref,
                                        RowStatistics const& known) {
  if (known.lse.size() != query_rows(in.shape) || known.delta.size() != query_rows(in.shape))
    throw std::invalid_argument("known row statistics: " + std::to_string(known.lse.size()) + " LSE and " +
                                std::to_string(known.delta.size()) + " D values for " +
                                std::to_string(query_rows(in.shape)) + " query rows");
  for (std::size_t t = 0; t < ref.sample.query_rows.size(); ++t) {
    std::size_t const r = ref.sample.query_rows[t];
    if (!same_bits(known.lse[r], ref.lse[t]) || !same_bits(known.delta[r], ref.delta[t]))
      throw std::invalid_argument("known row statistics differ from the reference's on query row " +
                                  std::to_string(r));
  }
  return known;
}

}  // namespace

void sort_unique(std::vector<std::size_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

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
  bool const backward = in.has_backward() && !options.forward_only;
  sort_unique(sample.query_rows);
  sort_unique(sample.key_rows);
  if (!backward) sample.key_rows.clear();

  SampledOutputs ref;
  ref.sample = std::move(sample);
  std::vector<std::size_t> const& rows = ref.sample.query_rows;
  std::size_t const nq = rows.size();
  ref.o.assign(nq * d, 0.0);
  ref.lse.assign(nq, kMinusInfinity);
  if (backward) {
    ref.delta.assign(nq, 0.0);
    ref.dq.assign(nq * d, 0.0);
  }
  for_query_blocks(
      in, rows, options.threads,
      [&](std::size_t t) {
        return QueryRowTargets{ref.o.data() + t * d, backward ? ref.dq.data() + t * d : nullptr, &ref.lse[t],
                               backward ? &ref.delta[t] : nullptr};
      },
      options.o_sum);
  if (ref.sample.key_rows.empty()) return ref;

  if (options.known_statistics) {
    RowStatistics const& known = checked_statistics(in, ref, *options.known_statistics);
    ref.all_lse = known.lse;
    ref.all_delta = known.delta;
  } else {
    // Statistics of every query row of the (batch, kv head) groups that the sampled key rows belong to.
    ref.all_lse.assign(query_rows(s), std::numeric_limits<double>::quiet_NaN());
    ref.all_delta.assign(query_rows(s), std::numeric_limits<double>::quiet_NaN());
    std::vector<char> needed(query_rows(s), 0);
    int const group = s.group_size();
    for (std::size_t c : ref.sample.key_rows) {
      RowIndex const x = key_row_index(s, c);
      for (int hq = x.head * group; hq < (x.head + 1) * group; ++hq) {
        std::size_t const row0 = (std::size_t(x.batch) * s.heads_q + std::size_t(hq)) * s.seqlen_q;
        std::fill(needed.begin() + std::ptrdiff_t(row0), needed.begin() + std::ptrdiff_t(row0 + s.seqlen_q),
                  1);
      }
    }
    for (std::size_t t = 0; t < nq; ++t) {  // rows already computed
      ref.all_lse[rows[t]] = ref.lse[t];
      ref.all_delta[rows[t]] = ref.delta[t];
      needed[rows[t]] = 0;
    }
    std::vector<std::size_t> todo;
    for (std::size_t r = 0; r < needed.size(); ++r)
      if (needed[r]) todo.push_back(r);
    for_query_blocks(
        in, todo, options.threads,
        [&](std::size_t t) {
          return QueryRowTargets{nullptr, nullptr, &ref.all_lse[todo[t]], &ref.all_delta[todo[t]]};
        },
        options.o_sum);
  }
  std::size_t const nk = ref.sample.key_rows.size();
  ref.dk.assign(nk * d, 0.0);
  ref.dv.assign(nk * d, 0.0);
  common::parallel_for(nk, options.threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t)
      compute_key_row(in, ref.sample.key_rows[t], ref.all_lse, ref.all_delta, ref.dk.data() + t * d,
                      ref.dv.data() + t * d);
  });
  return ref;
}

ReferenceForward reference_forward_rows(AttentionInputs const& in, ReferenceOptions const& options) {
  std::size_t const d = std::size_t(in.shape.head_dim);
  std::size_t const n = query_rows(in.shape);
  ReferenceForward out;
  out.o.assign(n * d, 0.0);
  out.statistics.lse.assign(n, kMinusInfinity);
  if (in.has_backward()) out.statistics.delta.assign(n, 0.0);
  std::vector<std::size_t> rows(n);
  std::iota(rows.begin(), rows.end(), std::size_t(0));
  for_query_blocks(
      in, rows, options.threads,
      [&](std::size_t r) {
        return QueryRowTargets{out.o.data() + r * d, nullptr, &out.statistics.lse[r],
                               in.has_backward() ? &out.statistics.delta[r] : nullptr};
      },
      options.o_sum, options.cancel);
  return out;
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
