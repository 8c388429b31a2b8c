#pragma once
// How closely one candidate output (an emulator run) reproduces an observed output.
//
// Measured per row, because a bug may live in one row of thousands: the error of a row is the L2 distance
// between the observed and the candidate row divided by the RMS row norm of the observed tensor (so a row
// error of 0.01 means "off by 1% of a typical row"), and the score of a candidate is the worst row. LSE
// rows are single numbers in log units and use the absolute difference (an LSE error e is a relative error
// e of the softmax denominator). Non-finite values must be reproduced exactly (NaN for NaN, +inf for +inf):
// a row where they are not counts as a mismatch, which outranks any finite error.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace fl::numerics::diagnosis {

struct MatchError {
  std::size_t mismatched_rows = 0;  // rows whose non-finite values are not reproduced
  double worst_row_error = 0.0;     // over rows with matching non-finite pattern
  int worst_row = -1;               // index into the compared row list, -1 if none

  // Lexicographic: fewer mismatched rows first, then the smaller worst row error.
  bool operator<(MatchError const& other) const {
    if (mismatched_rows != other.mismatched_rows) return mismatched_rows < other.mismatched_rows;
    return worst_row_error < other.worst_row_error;
  }
};

// RMS row norm of an observed (rows, width) tensor over its finite values; 1 when it is all zero or
// non-finite. Row errors are divided by it.
double typical_row_norm(std::span<double const> observed, std::size_t width);

// Both non-finite and the same (NaN and NaN, or the same infinity), or both finite.
bool same_class(double observed, double candidate);

// A match error as the evidence lines print it: two significant digits, scientific ("1.2e-03").
std::string scientific(double x);

// Combined over several tensors (O and LSE, or dQ, dK and dV): mismatches add, the worst row is the worst.
MatchError combine(MatchError const& a, MatchError const& b);

// observed and candidate: (rows, width) row-major, compared on the listed rows only (all rows when
// `rows` is empty). width 1 with absolute = true for LSE.
MatchError match_rows(std::span<double const> observed, std::span<float const> candidate, std::size_t width,
                      std::span<std::size_t const> rows, bool absolute);

// The same with the candidate packed: its row i is compared with observed row rows[i] (a reference computed
// on sampled rows only).
MatchError match_packed(std::span<double const> observed, std::span<double const> packed, std::size_t width,
                        std::span<std::size_t const> rows, bool absolute);

// "far better": how much closer a mutant must reproduce the observation than the correct algorithm does
// before it is named. See numerics/diagnosis/README.md for the derivation of the constant.
inline constexpr double kFarBetterRatio = 4.0;

// True when `mutant` reproduces the observation far better than `correct`: it reproduces at least as many
// non-finite rows and either strictly more of them (with finite rows no worse than kFarBetterRatio times
// the correct algorithm's) or a worst row error kFarBetterRatio times smaller.
bool far_better(MatchError const& mutant, MatchError const& correct);

// The strength of a name: how many times smaller its worst row error is than the correct algorithm's;
// infinite when it reproduces NaN/inf rows the correct algorithm does not (or matches exactly).
double lead_over(MatchError const& named, MatchError const& correct);

}  // namespace fl::numerics::diagnosis
