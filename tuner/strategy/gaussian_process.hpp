#pragma once
// A small Gaussian-process regressor for the Bayesian strategy: squared-exponential kernel on points
// scaled to [0, 1] per parameter, fixed hyperparameters, exact inference by Cholesky. The spaces are
// small (hundreds of points, tens of observations), so an O(n^3) refit per observation costs
// microseconds and needs no library.
#include <vector>

namespace fl::tuner {

class GaussianProcess {
 public:
  GaussianProcess(double length_scale, double noise_variance);

  // Refit on all observations (x: feature vectors, y: targets).
  void fit(std::vector<std::vector<double>> const& x, std::vector<double> const& y);
  // Posterior mean and standard deviation at x (in the units of y).
  void predict(std::vector<double> const& x, double& mean, double& stddev) const;
  bool empty() const { return x_.empty(); }

 private:
  double kernel(std::vector<double> const& a, std::vector<double> const& b) const;

  double length_scale_;
  double noise_variance_;
  double y_mean_ = 0.0;
  double y_scale_ = 1.0;
  std::vector<std::vector<double>> x_;
  std::vector<double> lower_;  // Cholesky factor L of K + noise·I, row-major n x n
  std::vector<double> alpha_;  // (K + noise·I)^-1 (y - mean) / scale
};

// Expected improvement (for minimisation) of a normal posterior over the best value seen so far.
double expected_improvement(double mean, double stddev, double best);

}  // namespace fl::tuner
