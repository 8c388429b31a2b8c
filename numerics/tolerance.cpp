#include "numerics/tolerance.hpp"

#include <algorithm>

#include "common/parallel_for.hpp"
#include "numerics/precision.hpp"
#include "numerics/tolerance_model.hpp"

namespace fl::numerics {

bool inputs_representable(AttentionInputs const& in, common::Precision p) {
  for (auto const* t : {&in.q, &in.k, &in.v, &in.d_o})
    for (double x : *t)
      if (double(round_to(p, float(x))) != x) return false;
  return true;
}

ElementBounds tolerance_bounds(AttentionInputs const& in, RowSample const& sample,
                               PrecisionRecipe const& recipe, ToleranceOptions const& options) {
  ToleranceModel const model(in, recipe, options);
  std::size_t const d = std::size_t(in.shape.head_dim);
  bool const backward = in.has_backward();
  ElementBounds b;
  std::size_t const nq = sample.query_rows.size();
  b.o.assign(nq * d, 0.0);
  b.lse.assign(nq, 0.0);
  if (backward) b.dq.assign(nq * d, 0.0);
  common::AttentionShape const& s = in.shape;
  std::vector<RowStats> stats(query_rows(s));
  common::parallel_for(nq, options.threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t)
      stats[sample.query_rows[t]] = model.query_row(sample.query_rows[t], b.o.data() + t * d, &b.lse[t],
                                                    backward ? b.dq.data() + t * d : nullptr);
  });
  if (!backward || sample.key_rows.empty()) return b;

  std::vector<char> needed(query_rows(s), 0);
  int const group = s.group_size();
  for (std::size_t c : sample.key_rows) {
    RowIndex const x = key_row_index(s, c);
    for (int hq = x.head * group; hq < (x.head + 1) * group; ++hq) {
      std::size_t const row0 = (std::size_t(x.batch) * s.heads_q + std::size_t(hq)) * s.seqlen_q;
      std::fill(needed.begin() + std::ptrdiff_t(row0), needed.begin() + std::ptrdiff_t(row0 + s.seqlen_q), 1);
    }
  }
  for (std::size_t r : sample.query_rows) needed[r] = 0;  // done above
  if (options.approximate_unsampled_row_stats && options.reference && !options.reference->all_lse.empty()) {
    // Largest variances of the sampled rows, per query head.
    std::vector<RowStats> head_max(std::size_t(s.batch) * s.heads_q);
    for (std::size_t r : sample.query_rows) {
      RowStats& h = head_max[r / std::size_t(s.seqlen_q)];
      h.var_lse = std::max(h.var_lse, stats[r].var_lse);
      h.var_delta = std::max(h.var_delta, stats[r].var_delta);
    }
    for (std::size_t r = 0; r < needed.size(); ++r) {
      if (!needed[r]) continue;
      RowStats& st = stats[r];
      st = head_max[r / std::size_t(s.seqlen_q)];
      st.lse = options.reference->all_lse[r];
      st.m = st.lse;  // only enters the fp32 exp-argument term, where |m| ~ |lse|
      st.delta = options.reference->all_delta[r];
      needed[r] = 0;
    }
  }
  std::vector<std::size_t> todo;
  for (std::size_t r = 0; r < needed.size(); ++r)
    if (needed[r]) todo.push_back(r);
  common::parallel_for(todo.size(), options.threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t)
      stats[todo[t]] = model.query_row(todo[t], nullptr, nullptr, nullptr);
  });
  std::size_t const nk = sample.key_rows.size();
  b.dk.assign(nk * d, 0.0);
  b.dv.assign(nk * d, 0.0);
  common::parallel_for(nk, options.threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t)
      model.key_row(sample.key_rows[t], stats, b.dk.data() + t * d, b.dv.data() + t * d);
  });
  return b;
}

}  // namespace fl::numerics
