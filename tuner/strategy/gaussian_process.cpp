#include "tuner/strategy/gaussian_process.hpp"

#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>

namespace fl::tuner {

GaussianProcess::GaussianProcess(double length_scale, double noise_variance)
    : length_scale_(length_scale), noise_variance_(noise_variance) {}

double GaussianProcess::kernel(std::vector<double> const& a, std::vector<double> const& b) const {
  double d2 = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
  return std::exp(-0.5 * d2 / (length_scale_ * length_scale_));
}

void GaussianProcess::fit(std::vector<std::vector<double>> const& x, std::vector<double> const& y) {
  std::size_t const n = x.size();
  x_ = x;
  // Standardise the targets so one set of hyperparameters fits every problem's time scale.
  y_mean_ = n ? std::accumulate(y.begin(), y.end(), 0.0) / double(n) : 0.0;
  double var = 0.0;
  for (double v : y) var += (v - y_mean_) * (v - y_mean_);
  y_scale_ = n > 1 && var > 0.0 ? std::sqrt(var / double(n)) : 1.0;

  lower_.assign(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double sum = kernel(x[i], x[j]) + (i == j ? noise_variance_ : 0.0);
      for (std::size_t k = 0; k < j; ++k) sum -= lower_[i * n + k] * lower_[j * n + k];
      if (i == j) {
        if (sum <= 0.0) throw std::runtime_error("gaussian process: kernel matrix not positive definite");
        lower_[i * n + i] = std::sqrt(sum);
      } else {
        lower_[i * n + j] = sum / lower_[j * n + j];
      }
    }
  // alpha = L^T \ (L \ y)
  std::vector<double> z(n);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = (y[i] - y_mean_) / y_scale_;
    for (std::size_t k = 0; k < i; ++k) sum -= lower_[i * n + k] * z[k];
    z[i] = sum / lower_[i * n + i];
  }
  alpha_.assign(n, 0.0);
  for (std::size_t i = n; i-- > 0;) {
    double sum = z[i];
    for (std::size_t k = i + 1; k < n; ++k) sum -= lower_[k * n + i] * alpha_[k];
    alpha_[i] = sum / lower_[i * n + i];
  }
}

void GaussianProcess::predict(std::vector<double> const& x, double& mean, double& stddev) const {
  std::size_t const n = x_.size();
  std::vector<double> k_star(n);
  for (std::size_t i = 0; i < n; ++i) k_star[i] = kernel(x, x_[i]);
  double m = 0.0;
  for (std::size_t i = 0; i < n; ++i) m += k_star[i] * alpha_[i];
  // v = L \ k_star; variance = k(x,x) - v·v
  std::vector<double> v(n);
  double vv = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double sum = k_star[i];
    for (std::size_t k = 0; k < i; ++k) sum -= lower_[i * n + k] * v[k];
    v[i] = sum / lower_[i * n + i];
    vv += v[i] * v[i];
  }
  mean = y_mean_ + y_scale_ * m;
  stddev = y_scale_ * std::sqrt(std::max(1.0 - vv, 1e-12));
}

double expected_improvement(double mean, double stddev, double best) {
  if (stddev <= 0.0) return std::max(best - mean, 0.0);
  double const z = (best - mean) / stddev;
  double const pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
  double const cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  return (best - mean) * cdf + stddev * pdf;
}

}  // namespace fl::tuner
