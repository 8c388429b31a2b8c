#pragma once
// The small problem the FP8 operand tests share: b2, h 4 query / 2 key-value heads (GQA), n_q 100 against
// n_k 70 (neither a multiple of a block), d64, per-block descales of 32 rows (so Q has 4 blocks, K/V 3).
#include "device/problem.hpp"

namespace fl::test {

inline device::Problem small_fp8_problem(common::Precision dtype, common::Fp8Scaling scaling) {
  device::Problem p;
  p.shape = {2, 4, 2, 100, 70, 64, false, 0.0};
  p.dtype = dtype;
  p.fp8.scaling = scaling;
  p.fp8.block_rows = 32;
  return p;
}

}  // namespace fl::test
