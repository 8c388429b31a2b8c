#include "numerics/incoherent_processing.hpp"

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace fl::numerics {

bool is_power_of_two(int n) {
  return n > 0 && (n & (n - 1)) == 0;
}

IncoherentTransform make_incoherent_transform(int head_dim, std::uint64_t seed) {
  if (!is_power_of_two(head_dim))
    throw std::invalid_argument("incoherent processing needs a power-of-two head dim, got " +
                                std::to_string(head_dim));
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin(0.5);
  IncoherentTransform t;
  t.signs.resize(std::size_t(head_dim));
  for (double& s : t.signs) s = coin(rng) ? 1.0 : -1.0;
  return t;
}

namespace {

void transform_rows(IncoherentTransform const& t, std::span<double> rows, bool inverse) {
  std::size_t const d = t.signs.size();
  if (d == 0 || rows.size() % d != 0)
    throw std::invalid_argument("apply_incoherent: rows are not a multiple of d");
  double const norm = 1.0 / std::sqrt(double(d));
  for (std::size_t start = 0; start < rows.size(); start += d) {
    double* x = rows.data() + start;
    if (!inverse)
      for (std::size_t e = 0; e < d; ++e) x[e] *= t.signs[e];
    // In-place Walsh-Hadamard butterflies: after log2(d) stages x holds x H (H symmetric, unnormalised).
    for (std::size_t half = 1; half < d; half *= 2)
      for (std::size_t block = 0; block < d; block += 2 * half)
        for (std::size_t e = block; e < block + half; ++e) {
          double const a = x[e];
          double const b = x[e + half];
          x[e] = a + b;
          x[e + half] = a - b;
        }
    for (std::size_t e = 0; e < d; ++e) x[e] *= inverse ? norm * t.signs[e] : norm;
  }
}

}  // namespace

void apply_incoherent(IncoherentTransform const& t, std::span<double> rows) {
  transform_rows(t, rows, false);
}

void apply_incoherent_inverse(IncoherentTransform const& t, std::span<double> rows) {
  transform_rows(t, rows, true);
}

}  // namespace fl::numerics
