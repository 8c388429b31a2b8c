#include "tuner/run/forward_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>
#include <vector>

namespace fl::tuner {

namespace {

constexpr double kOBoundInUnitRoundoffs = 2.0;
constexpr double kLseBound = 1e-4;
constexpr int kTailBlock = 64;

struct RowResult {
  double o_error = 0, lse_error = 0;
  std::int64_t nans = 0;
};

RowResult check_row(Problem const& p, HostInputs const& in, HostOutputs const& out, int b, int h, int row) {
  auto const& s = p.shape;
  auto const d = static_cast<std::size_t>(s.head_dim);
  int const kv = s.kv_head_of(h);
  float const* q = in.q.data() + ((std::size_t(b) * s.heads_q + h) * s.seqlen_q + row) * d;
  std::vector<double> score(static_cast<std::size_t>(s.seqlen_k));
  double m = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < s.seqlen_k; ++j) {
    if (!s.key_visible(row, j)) {
      score[j] = -std::numeric_limits<double>::infinity();
      continue;
    }
    float const* k = in.k.data() + ((std::size_t(b) * s.heads_kv + kv) * s.seqlen_k + j) * d;
    double acc = 0;
    for (std::size_t e = 0; e < d; ++e) acc += double(q[e]) * double(k[e]);
    score[j] = acc * s.scale();
    m = std::max(m, score[j]);
  }
  std::vector<double> o(d, 0.0);
  double l = 0;
  if (std::isfinite(m)) {
    for (int j = 0; j < s.seqlen_k; ++j) {
      if (!std::isfinite(score[j])) continue;
      double const w = std::exp(score[j] - m);
      l += w;
      float const* v = in.v.data() + ((std::size_t(b) * s.heads_kv + kv) * s.seqlen_k + j) * d;
      for (std::size_t e = 0; e < d; ++e) o[e] += w * v[e];
    }
  }
  RowResult r;
  float const* got = out.o.data() + ((std::size_t(b) * s.heads_q + h) * s.seqlen_q + row) * d;
  double num = 0, den = 0;
  for (std::size_t e = 0; e < d; ++e) {
    double const ref = l > 0 ? o[e] / l : 0.0;
    if (std::isnan(got[e])) ++r.nans;
    num += (got[e] - ref) * (got[e] - ref);
    den += ref * ref;
  }
  r.o_error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (r.nans > 0) r.o_error = std::numeric_limits<double>::infinity();
  double const lse_got = out.lse[(std::size_t(b) * s.heads_q + h) * s.seqlen_q + row];
  if (l > 0) {
    r.lse_error = std::fabs(lse_got - (m + std::log(l)));
  } else {
    r.lse_error =
        (lse_got == -std::numeric_limits<double>::infinity()) ? 0.0 : std::numeric_limits<double>::infinity();
  }
  if (std::isnan(lse_got)) {
    ++r.nans;
    r.lse_error = std::numeric_limits<double>::infinity();
  }
  return r;
}

}  // namespace

ForwardCheck check_forward(Problem const& problem, HostInputs const& in, HostOutputs const& out,
                           int rows_per_head, int heads, std::uint64_t seed) {
  auto const& s = problem.shape;
  ForwardCheck check;
  check.o_bound = kOBoundInUnitRoundoffs * numerics::unit_roundoff(problem.dtype);
  check.lse_bound = kLseBound;
  std::mt19937_64 rng(seed);
  int const pairs = s.batch * s.heads_q;
  int const pairs_to_check = heads <= 0 ? pairs : std::min(heads, pairs);
  for (int i = 0; i < pairs_to_check; ++i) {
    // Spread the sampled (batch, head) pairs over the whole range, always the first and the last.
    int const pair = pairs_to_check == 1 ? 0 : int(std::int64_t(i) * (pairs - 1) / (pairs_to_check - 1));
    int const b = pair / s.heads_q, h = pair % s.heads_q;
    std::set<int> rows;
    if (rows_per_head <= 0 || rows_per_head >= s.seqlen_q) {
      for (int r = 0; r < s.seqlen_q; ++r) rows.insert(r);
    } else {
      for (int r : {0, 1, s.seqlen_q - 2, s.seqlen_q - 1, (s.seqlen_q - 1) / kTailBlock * kTailBlock})
        if (r >= 0 && r < s.seqlen_q) rows.insert(r);
      while (int(rows.size()) < rows_per_head) rows.insert(int(rng() % std::uint64_t(s.seqlen_q)));
    }
    for (int row : rows) {
      auto const r = check_row(problem, in, out, b, h, row);
      ++check.rows_checked;
      check.nan_count += r.nans;
      if (r.o_error > check.worst_o_row_error || check.worst_row.empty()) {
        check.worst_o_row_error = std::max(check.worst_o_row_error, r.o_error);
        check.worst_row = "b" + std::to_string(b) + " h" + std::to_string(h) + " row " + std::to_string(row);
      }
      check.worst_lse_error = std::max(check.worst_lse_error, r.lse_error);
    }
  }
  check.pass = check.nan_count == 0 && check.worst_o_row_error <= check.o_bound &&
               check.worst_lse_error <= check.lse_bound;
  return check;
}

std::string summary(ForwardCheck const& c) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s: O row error %.2e (bound %.2e, worst %s), LSE %.2e (bound %.0e), NaN %lld, %lld rows",
                c.pass ? "pass" : "FAIL", c.worst_o_row_error, c.o_bound, c.worst_row.c_str(),
                c.worst_lse_error, c.lse_bound, static_cast<long long>(c.nan_count),
                static_cast<long long>(c.rows_checked));
  return buf;
}

}  // namespace fl::tuner
