#pragma once
// Reproducible random numbers: std::mt19937_64 is specified bit for bit by the standard, but
// std::normal_distribution is not (libstdc++ and libc++ differ), so normals come from our own Box-Muller
// on the engine's raw output. Same seed, same tensors, on any standard library.
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

namespace fl::numerics {

class SeededRandom {
 public:
  explicit SeededRandom(std::uint64_t seed) : engine_(seed) {}

  // Uniform in (0, 1): 53 random bits, never exactly 0 (Box-Muller takes its log).
  double uniform() {
    constexpr int kMantissaBits = 53;
    constexpr int kDropBits = 64 - kMantissaBits;
    return (double(engine_() >> kDropBits) + 0.5) * std::ldexp(1.0, -kMantissaBits);
  }
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double const radius = std::sqrt(-2.0 * std::log(uniform()));
    double const angle = 2.0 * std::numbers::pi * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }
  bool bernoulli(double p) { return uniform() < p; }
  // Uniform integer in [lo, hi].
  int integer(int lo, int hi) { return lo + int(uniform() * double(hi - lo + 1)); }
  double sign() { return uniform() < 0.5 ? -1.0 : 1.0; }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace fl::numerics
