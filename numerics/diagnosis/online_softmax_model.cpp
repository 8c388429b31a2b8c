#include "numerics/diagnosis/online_softmax_model.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace fl::numerics::diagnosis::block_detail {

char const* id_of(ForwardBug b) {
  switch (b) {
    case ForwardBug::unrescaled_o:
      return "unrescaled-o";
    case ForwardBug::unrescaled_l:
      return "unrescaled-l";
    case ForwardBug::stale_max:
      return "stale-max";
    case ForwardBug::normalize_in_loop:
      return "normalize-in-loop";
    case ForwardBug::exp_base_mismatch:
      return "exp-base-mismatch";
    case ForwardBug::lse_without_max:
      return "lse-without-max";
    case ForwardBug::tail_unmasked:
      return "tail-unmasked";
  }
  return "";
}

std::string describe(Config const& c) {
  std::ostringstream out;
  out << "kBlockN " << c.block_n << ", key blocks " << (c.reverse ? "last to first" : "first to last");
  if (c.splits > 1) out << ", " << c.splits << " split-KV chunks";
  return out.str();
}

RowKeys row_keys(AttentionInputs const& in, std::size_t row, int extra_keys) {
  common::AttentionShape const& s = in.shape;
  auto const d = std::size_t(s.head_dim);
  int const visible = std::min(s.seqlen_k, visible_keys(s, query_row_index(s, row).pos) + extra_keys);
  std::size_t const kv0 = first_key_row_for_query(s, row);
  RowKeys keys;
  double const* q = in.q.data() + row * d;
  for (int j = 0; j < visible; ++j) {
    double const* k = in.k.data() + (kv0 + std::size_t(j)) * d;
    double dot = 0;
    for (std::size_t e = 0; e < d; ++e) dot += q[e] * k[e];
    keys.score.push_back(dot * s.scale());
    keys.v.push_back(in.v.data() + (kv0 + std::size_t(j)) * d);
  }
  return keys;
}

std::vector<BlockStats> block_stats(RowKeys const& keys, int block_n, double gamma, int pads, std::size_t d) {
  int const n = int(keys.score.size()) + pads;
  std::vector<BlockStats> blocks(std::size_t((n + block_n - 1) / block_n));
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    BlockStats& st = blocks[b];
    st.weighted_v.assign(d, 0.0);
    int const j0 = int(b) * block_n, j1 = std::min(n, j0 + block_n);
    for (int j = j0; j < j1; ++j)
      st.max = std::max(st.max, j < int(keys.score.size()) ? keys.score[std::size_t(j)] : 0.0);
    for (int j = j0; j < j1; ++j) {
      if (j >= int(keys.score.size())) {  // a zero-padded key: score 0, V = 0
        st.sum += std::exp(gamma * (0.0 - st.max));
        continue;
      }
      double const w = std::exp(gamma * (keys.score[std::size_t(j)] - st.max));
      st.sum += w;
      for (std::size_t e = 0; e < d; ++e) st.weighted_v[e] += w * keys.v[std::size_t(j)][e];
    }
  }
  return blocks;
}

RowResult run_blocks(std::vector<BlockStats> const& blocks, Config const& c, std::optional<ForwardBug> bug,
                     double gamma, std::size_t d) {
  std::vector<std::size_t> order(blocks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = c.reverse ? order.size() - 1 - i : i;
  std::size_t const chunk = (order.size() + std::size_t(c.splits) - 1) / std::size_t(c.splits);
  std::vector<RowResult> parts;
  for (std::size_t start = 0; start < order.size(); start += chunk) {
    double m = kNegInf, l = 0;
    std::vector<double> acc(d, 0.0);
    for (std::size_t t = start; t < std::min(order.size(), start + chunk); ++t) {
      BlockStats const& b = blocks[order[t]];
      if (b.sum == 0) continue;
      double const m_new = std::max(m, b.max);
      double const m_p = bug == ForwardBug::stale_max ? (m == kNegInf ? 0.0 : m) : m_new;
      double const f = std::exp(gamma * (b.max - m_p));
      double const alpha = m == kNegInf ? 0.0 : std::exp(gamma * (m - m_new));
      l = (bug == ForwardBug::unrescaled_l ? l : alpha * l) + f * b.sum;
      double const keep = bug == ForwardBug::unrescaled_o ? 1.0 : alpha;
      for (std::size_t e = 0; e < d; ++e) acc[e] = keep * acc[e] + f * b.weighted_v[e];
      if (bug == ForwardBug::normalize_in_loop && l > 0)
        for (double& x : acc) x /= l;
      m = m_new;
    }
    RowResult part{acc, kNegInf};
    if (l > 0) {
      if (bug != ForwardBug::normalize_in_loop)
        for (double& x : part.o) x /= l;
      part.lse = (bug == ForwardBug::lse_without_max ? 0.0 : m) + std::log(l);
    }
    parts.push_back(std::move(part));
  }
  if (parts.size() == 1) return parts.front();
  RowResult out{std::vector<double>(d, 0.0), kNegInf};
  double top = kNegInf;
  for (auto const& p : parts) top = std::max(top, p.lse);
  if (top == kNegInf) return out;
  double total = 0;
  for (auto const& p : parts) total += std::exp(p.lse - top);
  out.lse = top + std::log(total);
  for (auto const& p : parts) {
    double const w = std::exp(p.lse - out.lse);
    for (std::size_t e = 0; e < d; ++e) out.o[e] += w * p.o[e];
  }
  return out;
}

}  // namespace fl::numerics::diagnosis::block_detail
