#pragma once
// Judges a forward output (O and LSE) against a float64 reference on sampled rows.
//
// Interim: numerics/ (issue 3) owns the reference and the per-element tolerance model; until it lands on
// this branch, this file holds a small float64 reference on sampled rows with a row-wise bound, so that
// fa-bench never times an unchecked kernel. Bound: the relative 2-norm error of each row of O within
// 2 u (u = unit roundoff of the dtype: bf16 2^-8, fp16 2^-11; correct kernels measured 2.9e-3 in bf16 on
// the H200, 2026-11-29, against 7.8e-3 allowed), LSE within 1e-4 absolute (measured 6.6e-6), a fully
// masked row exactly O = 0 and LSE = -inf, and no NaN anywhere in the sampled rows.
#include <cstdint>
#include <string>

#include "tuner/problem.hpp"
#include "tuner/run/host_tensors.hpp"

namespace fl::tuner {

struct ForwardCheck {
  bool pass = false;
  double worst_o_row_error = 0;  // relative 2-norm error of the worst row (absolute when the reference is 0)
  double worst_lse_error = 0;    // absolute
  double o_bound = 0;
  double lse_bound = 0;
  std::int64_t nan_count = 0;
  std::int64_t rows_checked = 0;
  std::string worst_row;  // "b0 h3 row 4095" of the worst O row
};

// rows_per_head = 0 checks every row; otherwise the first two, the last two, the first row of the last
// block of 64, and random rows, up to rows_per_head, on at most `heads` (batch, head) pairs.
ForwardCheck check_forward(Problem const& problem, HostInputs const& in, HostOutputs const& out,
                           int rows_per_head = 0, int heads = 0, std::uint64_t seed = 1);

std::string summary(ForwardCheck const& check);

}  // namespace fl::tuner
