#include "numerics/diagnosis/block_models.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <numbers>
#include <optional>
#include <sstream>

#include "numerics/diagnosis/bug_fixes.hpp"
#include "numerics/diagnosis/diagnose.hpp"
#include "numerics/diagnosis/failing_row_properties.hpp"
#include "numerics/diagnosis/online_softmax_model.hpp"

namespace fl::numerics::diagnosis {

namespace {

using namespace block_detail;

constexpr double kLog2e = std::numbers::log2e;
// Forward models compare at most this many failing rows (evenly thinned) plus the passing sample.
constexpr std::size_t kModelRowsCompared = 128;
constexpr int kBlockStep = 8, kMaxModelBlock = 256;
constexpr std::size_t kConfigsPerSize = 4;  // key order x split-KV chunks (1 or 2)

// The error of one model row against the observation: O's L2 distance over the typical row norm, and
// LSE's absolute difference; non-finite values must match exactly.
struct RowError {
  bool mismatch = false;
  double error = 0;
};

RowError row_error(AttentionOutputs const& observed, std::size_t row, RowResult const& model, std::size_t d,
                   double norm) {
  RowError r;
  double sum = 0;
  for (std::size_t e = 0; e < d; ++e) {
    double const o = observed.o[row * d + e], c = model.o.empty() ? 0.0 : model.o[e];
    if (!same_class(o, c)) return {true, 0};
    if (std::isfinite(o)) sum += (o - c) * (o - c);
  }
  r.error = std::sqrt(sum) / norm;
  if (!observed.lse.empty()) {
    double const o = observed.lse[row];
    // A row that sees no key: -inf and +inf are both right (FlashAttention-2 writes +inf).
    double const c = model.lse == kNegInf && o == -kNegInf ? o : model.lse;
    if (!same_class(o, c)) return {true, 0};
    if (std::isfinite(o)) r.error = std::max(r.error, std::abs(o - c));
  }
  return r;
}

void add(MatchError& m, RowError const& r, std::size_t row) {
  if (r.mismatch) {
    ++m.mismatched_rows;
    return;
  }
  if (r.error > m.worst_row_error || m.worst_row < 0) {
    m.worst_row_error = std::max(m.worst_row_error, r.error);
    m.worst_row = int(row);
  }
}

fl::numerics::DiagnosisEntry bug_entry(std::string const& id, MatchError const& named,
                                       MatchError const& correct, std::string const& where,
                                       std::string const& pattern) {
  fl::numerics::DiagnosisEntry e;
  e.id = id;
  e.kind = "bug";
  e.evidence = "a float64 model of the bug (" + where + ") reproduces the observation to " +
               scientific(named.worst_row_error) +
               " (worst row, relative to a typical row); the correct algorithm misses by " +
               scientific(correct.worst_row_error) +
               (correct.mismatched_rows > named.mismatched_rows
                    ? " and " + std::to_string(correct.mismatched_rows) + " NaN/inf rows"
                    : std::string()) +
               (pattern.empty() ? "" : "; " + pattern);
  e.fix = std::string(fix_for_bug(id));
  e.match_error = ranking_error(named);
  e.strength = lead_over(named, correct);
  return e;
}

}  // namespace

std::vector<mutants::MutantId> modelled_bugs() {
  using mutants::MutantId;
  // missing-scale is the interface hypothesis "a softmax scale of 1" (interface_mistakes.cpp).
  return {MutantId::unrescaled_o,      MutantId::unrescaled_l,         MutantId::stale_max,
          MutantId::normalize_in_loop, MutantId::exp_base_mismatch,    MutantId::lse_without_max,
          MutantId::tail_unmasked,     MutantId::causal_diagonal,      MutantId::missing_scale,
          MutantId::bwd_missing_delta, MutantId::bwd_dk_missing_scale, MutantId::bwd_dq_overwrite,
          MutantId::bwd_p_without_l};
}

std::string declined_note(std::string const& what, double work, double cap, std::string const& advice) {
  std::ostringstream out;
  out << std::setprecision(2) << "diagnosis: " << what << " not tried: the problem needs about " << work
      << " multiply-adds, above its cap of " << cap << "; " << advice;
  return out.str();
}

std::vector<int> model_block_sizes(std::vector<int> const& extra) {
  std::vector<int> sizes;
  for (int b = kBlockStep; b <= kMaxModelBlock; b += kBlockStep) sizes.push_back(b);
  for (int b : extra)
    if (b >= 1 && std::find(sizes.begin(), sizes.end(), b) == sizes.end()) sizes.push_back(b);
  return sizes;
}

std::vector<fl::numerics::DiagnosisEntry> model_forward_bugs(
    AttentionInputs const& in, AttentionOutputs const& observed,
    std::vector<std::size_t> const& failing_query_rows, ModelOptions const& options) {
  common::AttentionShape const& s = in.shape;
  auto const d = std::size_t(s.head_dim);
  std::vector<std::size_t> const rows =
      compared_query_rows(query_rows(s), failing_query_rows, kModelRowsCompared);
  std::vector<int> const sizes = model_block_sizes(options.extra_block_sizes);
  std::vector<Config> configs;
  for (int bn : sizes)
    for (bool reverse : {false, true})
      for (int splits : {1, 2}) configs.push_back({bn, reverse, splits});
  double const work = double(rows.size()) * s.seqlen_k * double(d) * double(sizes.size()) * 3.0;
  if (work > kMaxModelWork) {
    if (options.declined)
      options.declined->push_back(declined_note("the float64 models of the forward bugs", work, kMaxModelWork,
                                                "a forward bug is named only by the emulator search"));
    return {};
  }
  double const norm = typical_row_norm(observed.o, d);

  std::size_t const n_bugs = std::size(kForwardBugs);
  std::vector<MatchError> errors(n_bugs * configs.size());
  MatchError correct,
      diagonal;  // the correct algorithm; causal-diagonal (each row sees one key more, or not)
  std::size_t diagonal_rows = 0;
  for (std::size_t row : rows) {
    RowKeys const keys = row_keys(in, row);
    // The correct algorithm is the same for any blocks: one block holding every visible key.
    RowResult const exact =
        run_blocks(block_stats(keys, std::max<int>(1, int(keys.score.size())), 1.0, 0, d),
                   {std::max<int>(1, int(keys.score.size())), false, 1}, std::nullopt, 1.0, d);
    RowError const exact_error = row_error(observed, row, exact, d, norm);
    add(correct, exact_error, row);
    if (s.causal && int(keys.score.size()) < s.seqlen_k) {
      RowKeys const wider = row_keys(in, row, 1);
      RowResult const extra = run_blocks(block_stats(wider, int(wider.score.size()), 1.0, 0, d),
                                         {int(wider.score.size()), false, 1}, std::nullopt, 1.0, d);
      RowError const e = row_error(observed, row, extra, d, norm);
      bool const explains = !e.mismatch && (exact_error.mismatch || e.error < exact_error.error);
      add(diagonal, explains ? e : exact_error, row);
      diagonal_rows += explains && !exact_error.mismatch && e.error * kFarBetterRatio < exact_error.error;
    } else {
      add(diagonal, exact_error, row);
    }
    if (keys.score.empty()) {
      for (MatchError& e : errors) add(e, exact_error, row);
      continue;
    }
    int const n = int(keys.score.size());
    for (std::size_t si = 0; si < sizes.size(); ++si) {
      int const bn = sizes[si];
      // Statistics per block size (and exponent base, padding), shared by every order and split.
      std::vector<BlockStats> const natural = block_stats(keys, bn, 1.0, 0, d);
      std::vector<BlockStats> const base2 = block_stats(keys, bn, kLog2e, 0, d);
      int const pads = s.causal ? 0 : (bn - n % bn) % bn;
      std::vector<BlockStats> const padded =
          pads == 0 ? std::vector<BlockStats>{} : block_stats(keys, bn, 1.0, pads, d);
      for (std::size_t k = 0; k < kConfigsPerSize; ++k) {
        std::size_t const ci = si * kConfigsPerSize + k;
        Config const& c = configs[ci];
        for (std::size_t b = 0; b < n_bugs; ++b) {
          ForwardBug const bug = kForwardBugs[b];
          RowResult const model = bug == ForwardBug::exp_base_mismatch ? run_blocks(base2, c, bug, kLog2e, d)
                                  : bug == ForwardBug::tail_unmasked
                                      ? (pads == 0 ? exact : run_blocks(padded, c, std::nullopt, 1.0, d))
                                      : run_blocks(natural, c, bug, 1.0, d);
          add(errors[b * configs.size() + ci], row_error(observed, row, model, d, norm), row);
        }
      }
    }
  }
  // The pattern of the failing rows at the matched tile (all scores negative, max in a late key block,
  // keys ending in a partial tail block, ...): why the bug bit where it did.
  FailingRowSummary const summary = summarise_failing_rows(in, {failing_query_rows, {}, {}}, false);
  auto shared_pattern = [&](int block_n) {
    std::string const shared = summary.shared(block_n, kStageOneBlockM);
    return shared.empty() ? shared : "failing rows share: " + shared;
  };
  std::vector<fl::numerics::DiagnosisEntry> out;
  for (std::size_t b = 0; b < n_bugs; ++b) {
    std::size_t best = 0;
    for (std::size_t ci = 1; ci < configs.size(); ++ci)
      if (errors[b * configs.size() + ci] < errors[b * configs.size() + best]) best = ci;
    MatchError const& e = errors[b * configs.size() + best];
    if (far_better(e, correct))
      out.push_back(bug_entry(id_of(kForwardBugs[b]), e, correct, describe(configs[best]),
                              shared_pattern(configs[best].block_n)));
  }
  if (diagonal_rows > 0 && far_better(diagonal, correct))
    out.push_back(
        bug_entry("causal-diagonal", diagonal, correct, "each query also sees the key after its diagonal",
                  std::to_string(diagonal_rows) + " of " + std::to_string(rows.size()) +
                      " compared rows are explained by the extra key, the others match the reference"));
  std::sort(out.begin(), out.end(),
            [](auto const& a, auto const& b) { return a.match_error < b.match_error; });
  return out;
}

}  // namespace fl::numerics::diagnosis