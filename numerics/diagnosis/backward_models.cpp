// Float64 models of the catalogued backward bugs (block_models.hpp): from P, dP and D of every row, the
// gradients each bug produces, compared with the observed dQ, dK, dV on every row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "numerics/diagnosis/block_models.hpp"
#include "numerics/diagnosis/bug_fixes.hpp"
#include "numerics/diagnosis/diagnose.hpp"

namespace fl::numerics::diagnosis {

namespace {

enum class BackwardModel { correct, missing_delta, dk_missing_scale, p_without_l };
constexpr BackwardModel kWholeModels[] = {BackwardModel::correct, BackwardModel::missing_delta,
                                          BackwardModel::dk_missing_scale, BackwardModel::p_without_l};
char const* id_of(BackwardModel m) {
  switch (m) {
    case BackwardModel::missing_delta:
      return "bwd-missing-delta";
    case BackwardModel::dk_missing_scale:
      return "bwd-dk-missing-scale";
    case BackwardModel::p_without_l:
      return "bwd-p-without-l";
    case BackwardModel::correct:
      break;
  }
  return "";
}

// Query tile heights tried for bwd-dq-overwrite under causal masks (which key block visits a row's tile
// last depends on it); N_q stands for a backward that visits every tile.
constexpr int kOverwriteBlockM[] = {1, 16, 32, 64, 128};

struct Gradients {
  std::vector<double> dq, dk, dv;
};

struct HeadRows {
  // Per query row of one head: visible key count, P, dS (unscaled, correct), l = sum exp(s - max).
  std::vector<int> visible;
  std::vector<std::vector<double>> p, ds;
  std::vector<double> l;
};

// Everything of one (batch, query head) the models need.
HeadRows head_rows(AttentionInputs const& in, std::size_t b, int h) {
  common::AttentionShape const& s = in.shape;
  auto const d = std::size_t(s.head_dim);
  std::size_t const nq = std::size_t(s.seqlen_q);
  std::size_t const kv0 = first_key_row_for_query(s, (b * std::size_t(s.heads_q) + std::size_t(h)) * nq);
  HeadRows rows;
  for (std::size_t i = 0; i < nq; ++i) {
    std::size_t const row = (b * std::size_t(s.heads_q) + std::size_t(h)) * nq + i;
    int const vis = visible_keys(s, int(i));
    std::vector<double> p(static_cast<std::size_t>(vis)), dp(static_cast<std::size_t>(vis));
    double const* q = in.q.data() + row * d;
    double const* g = in.d_o.data() + row * d;
    double m = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < vis; ++j) {
      double const* k = in.k.data() + (kv0 + std::size_t(j)) * d;
      double const* v = in.v.data() + (kv0 + std::size_t(j)) * d;
      double dot = 0, dpv = 0;
      for (std::size_t e = 0; e < d; ++e) dot += q[e] * k[e], dpv += g[e] * v[e];
      p[std::size_t(j)] = dot * s.scale();
      dp[std::size_t(j)] = dpv;
      m = std::max(m, p[std::size_t(j)]);
    }
    double l = 0;
    for (double& x : p) l += (x = std::exp(x - m));
    double delta = 0;  // D = sum_j P dP = rowsum(dO * O)
    for (int j = 0; j < vis; ++j) delta += (p[std::size_t(j)] /= l) * dp[std::size_t(j)];
    std::vector<double> ds(static_cast<std::size_t>(vis));
    for (int j = 0; j < vis; ++j) ds[std::size_t(j)] = p[std::size_t(j)] * (dp[std::size_t(j)] - delta);
    rows.visible.push_back(vis);
    rows.l.push_back(vis > 0 ? l : 0.0);
    rows.p.push_back(std::move(p));
    // bwd-missing-delta's dS is P dP = dS + P D: kept through dp below.
    for (int j = 0; j < vis; ++j) dp[std::size_t(j)] *= rows.p.back()[std::size_t(j)];
    rows.ds.push_back(std::move(ds));
    rows.ds.push_back(std::move(dp));  // odd entries: P dP
  }
  return rows;
}

Gradients whole_model(AttentionInputs const& in, std::vector<HeadRows> const& heads, BackwardModel model) {
  common::AttentionShape const& s = in.shape;
  auto const d = std::size_t(s.head_dim);
  std::size_t const nq = std::size_t(s.seqlen_q);
  Gradients g{std::vector<double>(s.q_elements(), 0.0), std::vector<double>(s.kv_elements(), 0.0),
              std::vector<double>(s.kv_elements(), 0.0)};
  double const scale = s.scale();
  double const dk_scale = model == BackwardModel::dk_missing_scale ? 1.0 : scale;
  for (std::size_t bh = 0; bh < heads.size(); ++bh) {
    std::size_t const kv0 = first_key_row_for_query(s, bh * nq);
    for (std::size_t i = 0; i < nq; ++i) {
      std::size_t const row = bh * nq + i;
      HeadRows const& hr = heads[bh];
      double const weight = model == BackwardModel::p_without_l ? hr.l[i] : 1.0;  // P l: unnormalised P
      std::vector<double> const& ds = hr.ds[2 * i + (model == BackwardModel::missing_delta ? 1 : 0)];
      for (int j = 0; j < hr.visible[i]; ++j) {
        double const pj = hr.p[i][std::size_t(j)] * weight, dsj = ds[std::size_t(j)] * weight;
        std::size_t const key = kv0 + std::size_t(j);
        for (std::size_t e = 0; e < d; ++e) {
          g.dq[row * d + e] += scale * dsj * in.k[key * d + e];
          g.dk[key * d + e] += dk_scale * dsj * in.q[row * d + e];
          g.dv[key * d + e] += pj * in.d_o[row * d + e];
        }
      }
    }
  }
  return g;
}

struct GradientErrors {
  MatchError dq, dk, dv;
  MatchError all() const { return combine(combine(dq, dk), dv); }
};

GradientErrors match(AttentionOutputs const& observed, Gradients const& g, std::size_t d) {
  auto one = [&](std::vector<double> const& obs, std::vector<double> const& model) {
    if (obs.empty()) return MatchError{};
    return match_packed(obs, model, d, {}, false);
  };
  return {one(observed.dq, g.dq), one(observed.dk, g.dk), one(observed.dv, g.dv)};
}

// dQ of each row from the last key block the backward visits only, per (kBlockN, kBlockM, order); the best
// configuration's worst dQ row.
MatchError overwrite_dq(AttentionInputs const& in, std::vector<HeadRows> const& heads,
                        AttentionOutputs const& observed, std::vector<int> const& sizes, std::string& where) {
  common::AttentionShape const& s = in.shape;
  auto const d = std::size_t(s.head_dim);
  std::size_t const nq = std::size_t(s.seqlen_q);
  double const norm = typical_row_norm(observed.dq, d);
  MatchError best;
  bool first = true;
  std::vector<int> block_ms(std::begin(kOverwriteBlockM), std::end(kOverwriteBlockM));
  block_ms.push_back(s.seqlen_q);
  for (int bn : sizes)
    for (bool reverse : {false, true})
      for (int bm : s.causal ? block_ms : std::vector<int>{s.seqlen_q}) {
        MatchError err;
        int const blocks = (s.seqlen_k + bn - 1) / bn;
        for (std::size_t bh = 0; bh < heads.size(); ++bh) {
          std::size_t const kv0 = first_key_row_for_query(s, bh * nq);
          for (std::size_t i = 0; i < nq; ++i) {
            std::size_t const row = bh * nq + i;
            int last = blocks - 1;
            if (reverse) {
              last = 0;
            } else if (s.causal) {
              long long const tile_end =
                  std::min<long long>(s.seqlen_q, (static_cast<long long>(i) / bm + 1) * bm);
              long long const last_key =
                  std::min<long long>(s.seqlen_k - 1, tile_end - 1 + s.causal_offset());
              last = last_key < 0 ? 0 : int(last_key / bn);
            }
            HeadRows const& hr = heads[bh];
            int const j0 = last * bn, j1 = std::min(hr.visible[i], j0 + bn);
            std::vector<double> model(d, 0.0);
            for (int j = j0; j < j1; ++j) {
              double const w = s.scale() * hr.ds[2 * i][std::size_t(j)];
              double const* k = in.k.data() + (kv0 + std::size_t(j)) * d;
              for (std::size_t x = 0; x < d; ++x) model[x] += w * k[x];
            }
            double sum = 0;
            bool finite = true;
            for (std::size_t x = 0; x < d; ++x) {
              double const diff = observed.dq[row * d + x] - model[x];
              finite = finite && std::isfinite(diff);
              sum += diff * diff;
            }
            if (!finite) {
              ++err.mismatched_rows;
              continue;
            }
            double const error = std::sqrt(sum) / norm;
            if (error > err.worst_row_error || err.worst_row < 0) {
              err.worst_row_error = std::max(err.worst_row_error, error);
              err.worst_row = int(row);
            }
          }
        }
        if (first || err < best) {
          best = err;
          std::ostringstream w;
          w << "kBlockN " << bn << (s.causal ? ", kBlockM " + std::to_string(bm) : std::string())
            << ", key blocks " << (reverse ? "last to first" : "first to last");
          where = w.str();
        }
        first = false;
      }
  return best;
}

// Which gradients the reference misses and which it matches: the signature a reader checks first.
std::string gradient_pattern(GradientErrors const& correct, GradientErrors const& named) {
  std::ostringstream wrong, right;
  auto one = [&](char const* name, MatchError const& c, MatchError const& n) {
    bool const fails =
        c.mismatched_rows > n.mismatched_rows || c.worst_row_error > kFarBetterRatio * n.worst_row_error;
    (fails ? wrong : right) << (fails ? (wrong.tellp() > 0 ? ", " : "") : (right.tellp() > 0 ? ", " : ""))
                            << name << " (" << scientific(c.worst_row_error) << ")";
  };
  one("dQ", correct.dq, named.dq);
  one("dK", correct.dk, named.dk);
  one("dV", correct.dv, named.dv);
  std::string out = "the reference misses " + wrong.str();
  if (right.tellp() > 0) out += "; it matches " + right.str();
  return out;
}

}  // namespace

std::vector<fl::numerics::DiagnosisEntry> model_backward_bugs(AttentionInputs const& in,
                                                              AttentionOutputs const& observed,
                                                              ModelOptions const& options) {
  common::AttentionShape const& s = in.shape;
  if (!in.has_backward() || (observed.dq.empty() && observed.dk.empty() && observed.dv.empty())) return {};
  double const work = double(s.batch) * s.heads_q * double(s.seqlen_q) * s.seqlen_k * s.head_dim * 8.0;
  if (work > kMaxModelWork) {
    if (options.declined)
      options.declined->push_back(
          declined_note("the float64 models of the backward bugs", work, kMaxModelWork,
                        "check fewer heads or a shorter sequence to name a backward bug"));
    return {};
  }
  auto const d = std::size_t(s.head_dim);
  std::vector<HeadRows> heads;
  for (std::size_t b = 0; b < std::size_t(s.batch); ++b)
    for (int h = 0; h < s.heads_q; ++h) heads.push_back(head_rows(in, b, h));
  GradientErrors const correct = match(observed, whole_model(in, heads, BackwardModel::correct), d);
  std::vector<fl::numerics::DiagnosisEntry> out;
  auto name = [&](std::string const& id, GradientErrors const& e, std::string const& where) {
    MatchError const all = e.all(), base = correct.all();
    if (!far_better(all, base)) return;
    fl::numerics::DiagnosisEntry entry;
    entry.id = id;
    entry.kind = "bug";
    entry.evidence = "a float64 model of the bug" + (where.empty() ? std::string() : " (" + where + ")") +
                     " reproduces dQ, dK, dV to " + scientific(all.worst_row_error) +
                     " (worst row, relative to a typical row); " + gradient_pattern(correct, e);
    entry.fix = std::string(fix_for_bug(id));
    entry.match_error = ranking_error(all);
    entry.strength = lead_over(all, base);
    out.push_back(std::move(entry));
  };
  for (BackwardModel m : kWholeModels)
    if (m != BackwardModel::correct) name(id_of(m), match(observed, whole_model(in, heads, m), d), "");
  if (!observed.dq.empty() && s.seqlen_k > 1) {
    std::string where;
    GradientErrors e = correct;
    e.dq = overwrite_dq(in, heads, observed, model_block_sizes(options.extra_block_sizes), where);
    name("bwd-dq-overwrite", e, where);
  }
  std::sort(out.begin(), out.end(),
            [](auto const& a, auto const& b) { return a.match_error < b.match_error; });
  return out;
}

}  // namespace fl::numerics::diagnosis
