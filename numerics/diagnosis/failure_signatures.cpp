#include "numerics/diagnosis/failure_signatures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "numerics/diagnosis/block_models.hpp"

namespace fl::numerics::diagnosis {

namespace {

bool fully_masked(common::AttentionShape const& s, std::size_t row) {
  return visible_keys(s, query_row_index(s, row).pos) == 0;
}

// NaN/inf anywhere in the row's O, or an LSE that is NaN (or infinite for a row that sees a key: a fully
// masked row's LSE is -inf, and FlashAttention-2 writes +inf there, both right).
bool non_finite(AttentionOutputs const& observed, std::size_t row, std::size_t d, bool masked) {
  for (std::size_t e = 0; e < d; ++e)
    if (!std::isfinite(observed.o[row * d + e])) return true;
  if (observed.lse.empty()) return false;
  double const lse = observed.lse[row];
  return std::isnan(lse) || (!masked && !std::isfinite(lse));
}

// Kernels that walk key blocks last to first (FlashAttention-3; fa2_sm80's masked blocks first) start a
// query tile at the block holding its last row's last visible key: a row of the tile that sees no key of
// that block keeps m = -inf through it and, unguarded, turns NaN for good, although it sees keys later. A
// tile whose last row sees no key is skipped (its rows written O = 0, LSE = -inf).
bool nan_in_reverse_walk(common::AttentionShape const& s, int pos, int block_m, int block_n) {
  int const tile_last = std::min(s.seqlen_q, (pos / block_m + 1) * block_m) - 1;
  int const tile_keys = visible_keys(s, tile_last);
  if (tile_keys == 0) return false;
  int const first_visited = (tile_keys - 1) / block_n;
  return visible_keys(s, pos) <= first_visited * block_n;
}

struct ReverseWalkMatch {
  int block_m = 0, block_n = 0;
  std::size_t rows = 0;  // non-finite rows that see keys
};

// The tile (kBlockM, kBlockN over 8..256 in steps of 8) whose last-to-first walk predicts exactly which
// query positions are non-finite, the same in every head; nullopt when none does. Index arithmetic only.
std::optional<ReverseWalkMatch> match_reverse_walk(common::AttentionShape const& s,
                                                   AttentionOutputs const& observed, std::size_t d) {
  std::size_t const rows = query_rows(s);
  auto const n = std::size_t(s.seqlen_q);
  std::vector<std::uint8_t> bad(n, 0);  // per position: 1 non-finite in every head, 0 in none
  for (std::size_t r = 0; r < rows; ++r) {
    int const pos = query_row_index(s, r).pos;
    bool const b = non_finite(observed, r, d, visible_keys(s, pos) == 0);
    if (r < n)
      bad[std::size_t(pos)] = b;
    else if (bad[std::size_t(pos)] != b)
      return std::nullopt;
  }
  std::vector<int> const sizes = model_block_sizes({});
  for (int bm : sizes)
    for (int bn : sizes) {
      ReverseWalkMatch m{bm, bn, 0};
      bool holds = true;
      for (int pos = 0; pos < s.seqlen_q && holds; ++pos) {
        bool const predicted = nan_in_reverse_walk(s, pos, bm, bn);
        holds = predicted == bool(bad[std::size_t(pos)]);
        m.rows += predicted && visible_keys(s, pos) > 0;
      }
      if (holds && m.rows > 0) return m;
    }
  return std::nullopt;
}

}  // namespace

std::optional<DiagnosisEntry> masked_row_nan_signature(AttentionInputs const& in,
                                                       AttentionOutputs const& observed,
                                                       std::vector<std::size_t> const& failing_forward) {
  common::AttentionShape const& s = in.shape;
  auto const d = std::size_t(s.head_dim);
  std::size_t const rows = query_rows(s);
  if (!s.causal || failing_forward.empty() || observed.o.size() != rows * d) return std::nullopt;
  if (!observed.lse.empty() && observed.lse.size() != rows) return std::nullopt;
  std::vector<std::size_t> failing = failing_forward;
  std::sort(failing.begin(), failing.end());
  failing.erase(std::unique(failing.begin(), failing.end()), failing.end());
  if (failing.back() >= rows) return std::nullopt;
  // Every row, not only the checked ones: a sampled check may not have looked at a NaN row.
  std::size_t masked = 0, masked_non_finite = 0, visible_non_finite = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    bool const m = fully_masked(s, r);
    bool const bad = non_finite(observed, r, d, m);
    masked += m;
    masked_non_finite += m && bad;
    visible_non_finite += !m && bad;
  }
  for (std::size_t r : failing)
    if (!non_finite(observed, r, d, fully_masked(s, r))) return std::nullopt;  // a finite row is wrong

  std::ostringstream why;
  why << "failure pattern: the " << failing.size() << " failing rows are all NaN/inf (in O, or NaN in LSE) "
      << "and every other row passes; ";
  if (visible_non_finite == 0) {
    if (masked_non_finite == 0) return std::nullopt;
    why << "they are " << failing.size() << " of the " << masked
        << " fully masked rows (query rows that see no key: causal "
        << (s.causal_top_left ? "top-left" : "bottom-right") << " aligned, N_q " << s.seqlen_q << ", N_k "
        << s.seqlen_k << "; the reference there is O = 0, LSE = -inf) and no row that sees a key is "
        << "non-finite";
    if (masked_non_finite < masked)
      why << "; the other " << masked - masked_non_finite
          << " fully masked rows are right (a query tile that sees no key is skipped, so which masked rows "
             "turn NaN depends on kBlockM)";
  } else {
    std::optional<ReverseWalkMatch> const walk = match_reverse_walk(s, observed, d);
    if (!walk) return std::nullopt;
    why << "the non-finite rows are exactly, in every head, those that see no key of the first key block "
        << "their query tile visits when key blocks are walked last to first at kBlockM " << walk->block_m
        << ", kBlockN " << walk->block_n << " (" << walk->rows << " of them see keys, " << masked_non_finite
        << " see none)";
  }
  why << ". Only a running max of -inf entering the exponent unguarded (exp(-inf - (-inf)) = NaN) does that";
  DiagnosisEntry entry;
  entry.id = std::string(mutants::info(mutants::MutantId::masked_row_nan).name);
  entry.evidence = why.str();
  entry.match_error = 0.0;  // the pattern is reproduced exactly: which rows are non-finite, and only those
  entry.mismatched_rows = 0;
  entry.strength = std::numeric_limits<double>::infinity();
  return entry;
}

}  // namespace fl::numerics::diagnosis
