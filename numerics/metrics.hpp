#pragma once
// Error metrics of one output tensor against its reference: aggregate figures and per-row maxima (a bug in
// 1 row of 16384 must never be averaged away). Elements where both values are the same infinity count as
// exact (LSE of a fully masked row is -inf); a NaN or an infinity in the observed tensor where the
// reference is finite is counted, and makes max_abs infinite, but is left out of the averaged figures.
#include <cstddef>
#include <span>
#include <vector>

namespace fl::numerics {

struct ErrorMetrics {
  std::size_t count = 0;        // elements compared
  double max_abs = 0.0;         // max |x - ref|
  std::size_t worst_index = 0;  // where max_abs occurs
  double rmse = 0.0;            // sqrt(mean (x - ref)^2) over finite pairs
  double rel_frobenius = 0.0;   // ||x - ref||_2 / ||ref||_2 (0 when both are 0)
  double cosine = 1.0;          // <x, ref> / (||x|| ||ref||) (1 when both are 0)
  double rel_l1 = 0.0;          // sum |x - ref| / sum |ref|
  std::size_t nan_count = 0;    // NaN in the observed tensor
  std::size_t inf_count = 0;    // +-inf in the observed tensor where the reference is finite
};

ErrorMetrics compute_metrics(std::span<double const> observed, std::span<double const> reference);

// |x - ref| for one pair with the conventions above (0 for equal infinities, +inf for NaN).
double element_error(double observed, double reference);

// Max |x - ref| of each row of `row_length` elements.
std::vector<double> per_row_max_abs(std::span<double const> observed, std::span<double const> reference,
                                    std::size_t row_length);

}  // namespace fl::numerics
