#pragma once
// Pieces shared by the backward kernels: the recomputed probability, dS, and the per-row statistics
// staged in shared memory. Mutant switches of the backward sit here and in fa2_sm80_bwd.cu, one line each.
#include "fa_softmax.cuh"
#include "fa_types.cuh"

namespace fa {

// LSE in log2 units as the backward uses it: P = 2^(s * scale_log2 - lse_log2). A row with no visible key
// (LSE = -inf) and a padding row past n_q get +inf, so every P of theirs is 2^(-inf) = 0 rather than
// 2^(+inf).
__device__ __forceinline__ float lse_log2_for_backward(float lse, bool row_valid) {
  return (!row_valid || lse == neg_inf()) ? -neg_inf() : lse * kLog2e;
}

// dS = P * (dP - D), the gradient of the scaled scores (D = rowsum(dO * O) of the query row).
__device__ __forceinline__ float ds_of(float p, float dp, float delta) {
#ifdef FA_MUTANT_BWD_MISSING_DELTA
  return p * dp;  // [bwd-missing-delta] dS = P * dP without subtracting D
#else
  return p * (dp - delta);
#endif
}

}  // namespace fa
