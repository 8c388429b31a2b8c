#include "numerics/diagnosis/match_error.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace dx = fl::numerics::diagnosis;

TEST_CASE("row match error is relative to a typical row and finds the worst row", "[diagnosis]") {
  std::vector<double> const observed{1, 0, 0, 1, 3, 4};  // three rows of width 2, norms 1, 1, 5
  std::vector<float> candidate{1, 0, 0, 1, 3, 4};
  CHECK(dx::match_rows(observed, candidate, 2, {}, false).worst_row_error == 0.0);
  candidate[3] = 1.5f;  // row 1 off by 0.5
  auto const e = dx::match_rows(observed, candidate, 2, {}, false);
  double const typical = std::sqrt((1.0 + 1.0 + 9.0 + 16.0) / 6.0 * 2.0);  // 3
  CHECK(e.worst_row_error == Approx(0.5 / typical));
  CHECK(e.worst_row == 1);
  std::vector<std::size_t> const only_row_2{2};
  CHECK(dx::match_rows(observed, candidate, 2, only_row_2, false).worst_row_error == 0.0);
}

TEST_CASE("NaN and infinities must be reproduced exactly, or the row is a mismatch", "[diagnosis]") {
  double const nan = std::numeric_limits<double>::quiet_NaN();
  double const inf = std::numeric_limits<double>::infinity();
  std::vector<double> const observed{nan, -inf, 1.0};
  std::vector<float> const same{std::nanf(""), -std::numeric_limits<float>::infinity(), 1.0f};
  std::vector<float> const other{0.0f, std::numeric_limits<float>::infinity(), 1.0f};
  CHECK(dx::match_rows(observed, same, 1, {}, true).mismatched_rows == 0);
  auto const e = dx::match_rows(observed, other, 1, {}, true);
  CHECK(e.mismatched_rows == 2);
  CHECK(e.worst_row_error == 0.0);
}

TEST_CASE("far better: a ratio of kFarBetterRatio, or strictly more non-finite rows reproduced",
          "[diagnosis]") {
  dx::MatchError correct{0, 0.4, 0};
  CHECK(dx::far_better({0, 0.4 / dx::kFarBetterRatio, 0}, correct));
  CHECK_FALSE(dx::far_better({0, 0.4 / dx::kFarBetterRatio * 1.01, 0}, correct));
  CHECK_FALSE(dx::far_better({1, 0.0, 0}, correct));  // makes a NaN the observation does not have
  dx::MatchError const with_nan_rows{5, 1e-3, 0};
  CHECK(dx::far_better({0, 1e-3, 0}, with_nan_rows));
  CHECK_FALSE(dx::far_better({0, 1e-1, 0}, with_nan_rows));  // reproduces the NaNs but breaks finite rows
  CHECK_FALSE(dx::far_better({0, 0.0, 0}, {0, 0.0, 0}));     // identical to the correct algorithm: no name
}
