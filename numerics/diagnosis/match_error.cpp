#include "numerics/diagnosis/match_error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace fl::numerics::diagnosis {

bool same_class(double observed, double candidate) {
  bool const fo = std::isfinite(observed);
  bool const fc = std::isfinite(static_cast<double>(candidate));
  if (fo && fc) return true;
  if (fo != fc) return false;
  if (std::isnan(observed) || std::isnan(candidate)) return std::isnan(observed) && std::isnan(candidate);
  return observed == candidate;
}

std::string scientific(double x) {
  std::ostringstream out;
  out.precision(2);
  out << std::scientific << x;
  return out.str();
}

double typical_row_norm(std::span<double const> observed, std::size_t width) {
  double sum = 0;
  std::size_t count = 0;
  for (double x : observed)
    if (std::isfinite(x)) {
      sum += x * x;
      ++count;
    }
  if (count == 0 || sum == 0) return 1.0;
  return std::sqrt(sum / static_cast<double>(count) * static_cast<double>(width));
}

MatchError combine(MatchError const& a, MatchError const& b) {
  MatchError out;
  out.mismatched_rows = a.mismatched_rows + b.mismatched_rows;
  out.worst_row_error = std::max(a.worst_row_error, b.worst_row_error);
  out.worst_row = a.worst_row_error >= b.worst_row_error ? a.worst_row : b.worst_row;
  return out;
}

namespace {

// candidate(i, e): element e of the candidate's row for compared row i.
template <typename Candidate>
MatchError match_with(std::span<double const> observed, Candidate candidate, std::size_t width,
                      std::span<std::size_t const> rows, bool absolute) {
  MatchError out;
  double const norm = absolute ? 1.0 : typical_row_norm(observed, width);
  std::size_t const total_rows = observed.size() / width;
  std::size_t const count = rows.empty() ? total_rows : rows.size();
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t const row = rows.empty() ? i : rows[i];
    bool mismatch = false;
    double sum = 0;
    for (std::size_t e = 0; e < width; ++e) {
      double const o = observed[row * width + e];
      double const c = candidate(i, row, e);
      if (!same_class(o, c)) {
        mismatch = true;
        break;
      }
      if (std::isfinite(o)) sum += (o - c) * (o - c);
    }
    if (mismatch) {
      ++out.mismatched_rows;
      continue;
    }
    double const error = std::sqrt(sum) / norm;
    if (error > out.worst_row_error || out.worst_row < 0) {
      out.worst_row_error = std::max(out.worst_row_error, error);
      out.worst_row = static_cast<int>(row);
    }
  }
  return out;
}

}  // namespace

MatchError match_rows(std::span<double const> observed, std::span<float const> candidate, std::size_t width,
                      std::span<std::size_t const> rows, bool absolute) {
  return match_with(
      observed,
      [&](std::size_t, std::size_t row, std::size_t e) {
        return static_cast<double>(candidate[row * width + e]);
      },
      width, rows, absolute);
}

MatchError match_packed(std::span<double const> observed, std::span<double const> packed, std::size_t width,
                        std::span<std::size_t const> rows, bool absolute) {
  return match_with(
      observed, [&](std::size_t i, std::size_t, std::size_t e) { return packed[i * width + e]; }, width, rows,
      absolute);
}

bool far_better(MatchError const& mutant, MatchError const& correct) {
  if (mutant.mismatched_rows > correct.mismatched_rows) return false;
  if (mutant.mismatched_rows < correct.mismatched_rows)
    return mutant.worst_row_error <= kFarBetterRatio * correct.worst_row_error ||
           mutant.worst_row_error == 0.0;
  return mutant.worst_row_error * kFarBetterRatio <= correct.worst_row_error && correct.worst_row_error > 0.0;
}

double lead_over(MatchError const& named, MatchError const& correct) {
  if (named.mismatched_rows < correct.mismatched_rows || named.worst_row_error == 0.0)
    return std::numeric_limits<double>::infinity();
  return correct.worst_row_error / named.worst_row_error;
}

}  // namespace fl::numerics::diagnosis
