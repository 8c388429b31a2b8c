#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "numerics/metrics.hpp"

using namespace fl::numerics;

TEST_CASE("metrics on a hand-made case", "[numerics][metrics]") {
  std::vector<double> const ref = {3.0, 4.0, 0.0, 0.0};
  std::vector<double> const obs = {3.0, 4.0, 0.0, 1.0};
  ErrorMetrics const m = compute_metrics(obs, ref);
  CHECK(m.count == 4);
  CHECK(m.max_abs == 1.0);
  CHECK(m.worst_index == 3);
  CHECK(m.rmse == Approx(0.5));           // sqrt(1 / 4)
  CHECK(m.rel_frobenius == Approx(0.2));  // 1 / 5
  CHECK(m.rel_l1 == Approx(1.0 / 7.0));
  CHECK(m.cosine ==
        Approx(5.0 / std::sqrt(26.0)).epsilon(1e-12));  // <obs,ref> = 25, |obs| = sqrt 26, |ref| = 5
  CHECK(m.nan_count == 0);
  CHECK(m.inf_count == 0);
}

TEST_CASE("metrics count NaN and Inf and never average them away", "[numerics][metrics]") {
  double const inf = std::numeric_limits<double>::infinity();
  std::vector<double> const ref = {1.0, 2.0, -inf, 4.0};
  std::vector<double> const obs = {1.0, std::nan(""), -inf, inf};
  ErrorMetrics const m = compute_metrics(obs, ref);
  CHECK(m.nan_count == 1);
  CHECK(m.inf_count == 1);  // -inf against -inf is exact (LSE of a masked row)
  CHECK(std::isinf(m.max_abs));
  CHECK(m.worst_index == 1);
  CHECK(m.rmse == 0.0);  // the finite pairs agree
}

TEST_CASE("per-row maxima expose a single bad row", "[numerics][metrics]") {
  std::size_t const rows = 16384, d = 4;
  std::vector<double> ref(rows * d, 1.0);
  std::vector<double> obs = ref;
  obs[12345 * d + 2] += 0.5;
  std::vector<double> const per_row = per_row_max_abs(obs, ref, d);
  ErrorMetrics const m = compute_metrics(obs, ref);
  CHECK(m.rmse < 0.003);  // averaged away
  CHECK(per_row[12345] == 0.5);
  CHECK(per_row[12344] == 0.0);
  CHECK(m.worst_index == 12345 * d + 2);
}

TEST_CASE("cosine and relative errors of zero tensors", "[numerics][metrics]") {
  std::vector<double> const zero(3, 0.0);
  ErrorMetrics const m = compute_metrics(zero, zero);
  CHECK(m.cosine == 1.0);
  CHECK(m.rel_frobenius == 0.0);
  std::vector<double> const one = {0.0, 1.0, 0.0};
  CHECK(std::isinf(compute_metrics(one, zero).rel_frobenius));
}
