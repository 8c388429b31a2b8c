#pragma once
// Neumaier's compensated summation: the running error of each addition is kept in a second term, so a
// sum of n doubles is accurate to about one rounding of the result instead of n of them. The reference
// sums over up to 16384 keys; plain summation would lose up to log2(16384) = 14 bits in the worst case.
#include <cmath>

namespace fl::numerics {

class CompensatedSum {
 public:
  void add(double x) {
    double const t = sum_ + x;
    // Whichever operand is larger in magnitude keeps its low bits in t; recover the other's lost bits.
    if (std::fabs(sum_) >= std::fabs(x))
      compensation_ += (sum_ - t) + x;
    else
      compensation_ += (x - t) + sum_;
    sum_ = t;
  }
  double value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0.0;
  double compensation_ = 0.0;
};

}  // namespace fl::numerics
