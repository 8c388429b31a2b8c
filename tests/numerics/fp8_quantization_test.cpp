#include <catch2/catch.hpp>

#include <cmath>

#include "numerics/fp8_quantization.hpp"
#include "numerics/incoherent_processing.hpp"
#include "numerics/precision.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/seeded_random.hpp"

using namespace fl::numerics;

namespace {
std::vector<double> normals(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  SeededRandom rng(seed);
  std::vector<double> x(n);
  for (double& v : x) v = scale * rng.normal();
  return x;
}
}  // namespace

TEST_CASE("fp8 quantisation round-trips within half an ulp of the scaled value", "[numerics][fp8]") {
  for (fl::common::Precision format : {fl::common::Precision::fp8_e4m3, fl::common::Precision::fp8_e5m2}) {
    for (fl::common::Fp8Scaling scaling :
         {fl::common::Fp8Scaling::per_tensor, fl::common::Fp8Scaling::per_block}) {
      // 3 matrices of 70 rows (not a multiple of the 32-row blocks), 16 columns, with an outlier.
      std::vector<double> x = normals(3 * 70 * 16, 9);
      x[100] = 300.0;
      Fp8Tensor const t = quantize_fp8(x, 3, 70, 16, format, scaling, 32);
      CHECK(t.scales.size() == (scaling == fl::common::Fp8Scaling::per_tensor ? 1u : 3u * 3u));
      std::vector<double> const back = t.dequantized();
      double const u = unit_roundoff(format);
      for (std::size_t i = 0; i < x.size(); ++i) {
        CHECK(std::fabs(t.codes[i]) <= max_finite(format));
        CHECK(double(round_to(format, t.codes[i])) == double(t.codes[i]));  // codes are fp8 values
        double const descale = double(t.descale_of_row(i / 16));
        CHECK(std::fabs(back[i] - x[i]) <=
              u * std::fabs(x[i]) * 1.0001 + subnormal_half_step(format) * descale);
      }
      // The block holding the largest magnitude maps it onto the top of the format (to fp32 rounding).
      CHECK(std::fabs(t.codes[100]) == Approx(max_finite(format)).epsilon(1e-6));
    }
  }
}

TEST_CASE("per-block scaling is finer than per-tensor scaling on small blocks", "[numerics][fp8]") {
  // Block 0 has values ~1, block 1 values ~1e-4: per-tensor scaling pushes block 1 into the subnormals.
  std::vector<double> x = normals(64 * 8, 2);
  for (std::size_t i = 32 * 8; i < x.size(); ++i) x[i] *= 1e-4;
  auto err = [&](fl::common::Fp8Scaling s) {
    std::vector<double> back =
        quantize_fp8(x, 1, 64, 8, fl::common::Precision::fp8_e4m3, s, 32).dequantized();
    double worst = 0.0;
    for (std::size_t i = 32 * 8; i < x.size(); ++i)
      worst = std::max(worst, std::fabs(back[i] - x[i]) / std::fabs(x[i]));
    return worst;
  };
  CHECK(err(fl::common::Fp8Scaling::per_block) <= unit_roundoff(fl::common::Precision::fp8_e4m3) * 1.0001);
  CHECK(err(fl::common::Fp8Scaling::per_tensor) > 0.25);
}

TEST_CASE("fp8 conversion saturates rather than overflowing", "[numerics][fp8]") {
  std::vector<double> x = {1.0, 2.0, 4.0, 8.0};
  Fp8Tensor t =
      quantize_fp8(x, 1, 1, 4, fl::common::Precision::fp8_e4m3, fl::common::Fp8Scaling::per_tensor, 1);
  CHECK(t.codes[3] == 448.0f);
  CHECK(t.descales[0] == Approx(8.0 / 448.0));
  CHECK(round_to(fl::common::Precision::fp8_e4m3, 1e5f) == 448.0f);
}

TEST_CASE("incoherent processing leaves Q K^T unchanged and spreads outliers", "[numerics][fp8]") {
  for (int d : {16, 64, 128, 256}) {
    std::size_t const n = 12;
    std::vector<double> q = normals(n * std::size_t(d), 1);
    std::vector<double> k = normals(n * std::size_t(d), 2);
    q[3] = 1000.0;  // an outlier
    std::vector<double> qr = q, kr = k;
    IncoherentTransform const t = make_incoherent_transform(d, 77);
    apply_incoherent(t, qr);
    apply_incoherent(t, kr);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double a = 0.0, b = 0.0, mag = 0.0;
        for (std::size_t e = 0; e < std::size_t(d); ++e) {
          a += q[i * d + e] * k[j * d + e];
          b += qr[i * d + e] * kr[j * d + e];
          mag += std::fabs(q[i * d + e] * k[j * d + e]);
        }
        CHECK(std::fabs(a - b) <= 1e-13 * mag);
      }
    double row0_max = 0.0;
    for (int e = 0; e < d; ++e) row0_max = std::max(row0_max, std::fabs(qr[std::size_t(e)]));
    CHECK(row0_max < 1000.0 / std::sqrt(double(d)) * 1.1);  // the outlier is spread over d coordinates
    apply_incoherent_inverse(t, qr);
    for (std::size_t i = 0; i < q.size(); ++i) CHECK(qr[i] == Approx(q[i]).margin(1e-12));
  }
  CHECK_THROWS(make_incoherent_transform(96, 1));
}

TEST_CASE("fp8 probabilities use FlashAttention-3's 2^8 offset", "[numerics][fp8]") {
  PrecisionRecipe const r = recipe_for(fl::common::Precision::fp8_e4m3);
  CHECK(r.outputs == fl::common::Precision::bf16);
  CHECK(round_probability(r, 1.0f) == 1.0f);
  // 0.003 in plain e4m3 is subnormal (step 2^-9, error up to 33%); scaled by 256 it keeps 3 mantissa bits.
  CHECK(std::fabs(round_probability(r, 0.003f) - 0.003f) <= 0.003f * 0.0625f);
  CHECK(std::fabs(round_to(fl::common::Precision::fp8_e4m3, 0.003f) - 0.003f) > 0.003f * 0.0625f);
}
