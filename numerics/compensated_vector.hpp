#pragma once
// A vector of compensated sums (Knuth's branch-free TwoSum per element). The reference accumulates
// O += p_j * V_j, dQ += ds_j * K_j, dV += p_i * dO_i ... over thousands of rows; one accumulator per
// head-dimension element, and the element loop has no dependence between lanes, so the compiler
// vectorises it without reassociating any sum.
#include <cstddef>
#include <span>
#include <vector>

namespace fl::numerics {

// sum += y with its rounding error added to `compensation` (Knuth's TwoSum, branch-free). T is a double or
// a GCC vector of doubles (reference_rows.cpp keeps O's sums in such registers): the same operations per
// element either way, so the same bits.
template <class T>
[[gnu::always_inline]] inline void two_sum_add(T& sum, T& compensation, T const& y) {
  T const t = sum + y;
  T const y_part = t - sum;
  compensation += (sum - (t - y_part)) + (y - y_part);
  sum = t;
}

class CompensatedVector {
 public:
  explicit CompensatedVector(std::size_t size) : sum_(size, 0.0), compensation_(size, 0.0) {}

  // this += a * x (the product is rounded once; the sum keeps its error term).
  [[gnu::always_inline]] void add_scaled(double a, double const* x) {
    double* s = sum_.data();
    double* c = compensation_.data();
    std::size_t const n = sum_.size();
    for (std::size_t d = 0; d < n; ++d) two_sum_add(s[d], c[d], a * x[d]);
  }

  void write_to(std::span<double> out, double factor = 1.0) const {
    for (std::size_t d = 0; d < sum_.size(); ++d) out[d] = (sum_[d] + compensation_[d]) * factor;
  }

 private:
  std::vector<double> sum_;
  std::vector<double> compensation_;
};

// Dot product in double with eight independent partial sums (vectorisable, and the rounding error grows
// with d/8 instead of d). For d <= 256 its relative error stays far below the 1e-12 the reference promises.
// The partial sums are eight named locals rather than an array: GCC 12 kept the array in memory (a store and
// a reload per step), the locals stay in registers; the same operations in the same order, so the same bits
// (1.6x faster at d = 64 on this machine's SSE2 build). Always inlined, so that a caller compiled for a
// wider vector unit (reference_rows.cpp's clones) computes it at that width.
[[gnu::always_inline]] inline double dot(double const* a, double const* b, std::size_t n) {
  double p0 = 0.0, p1 = 0.0, p2 = 0.0, p3 = 0.0, p4 = 0.0, p5 = 0.0, p6 = 0.0, p7 = 0.0;
  std::size_t d = 0;
  for (; d + 8 <= n; d += 8) {
    p0 += a[d] * b[d];
    p1 += a[d + 1] * b[d + 1];
    p2 += a[d + 2] * b[d + 2];
    p3 += a[d + 3] * b[d + 3];
    p4 += a[d + 4] * b[d + 4];
    p5 += a[d + 5] * b[d + 5];
    p6 += a[d + 6] * b[d + 6];
    p7 += a[d + 7] * b[d + 7];
  }
  double tail = 0.0;
  for (; d < n; ++d) tail += a[d] * b[d];
  return ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)) + tail;
}

}  // namespace fl::numerics
