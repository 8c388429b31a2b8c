#pragma once
// The FlashAttention-1 warp layout's merge (fa2_sm80_fwd with kWarpsN > 1): kWarpsN warps ran their own
// online softmax over the columns of each key block for the same rows; their partial (m, l, O) are merged
// once at the end through shared memory with part_weight (the one rescale rule), leaving warp column 0
// with the rows' full state: row_max the overall max, row_sum the full sum (not quad-partial), O summed.
#include "fa_softmax.cuh"
#include "fa_types.cuh"

namespace fa {

// merge: kBlockM x kHeadDim fp32 O, then kWarpsN x kBlockM fp32 maxima and as many sums. local_row0: this
// thread's first row within the CTA's block (rows + 16 mt + 8 h). Returns whether this warp holds the
// merged rows (warp column 0); the others are done.
template <int kBlockM, int kHeadDim, int kWarpsN, int kMT, int kDT>
__device__ __forceinline__ bool merge_warp_columns(float (&o)[kMT][kDT][4], OnlineSoftmax<kMT>& softmax,
                                                   unsigned char* merge, int local_row0, int warp_n,
                                                   float scale_log2, int lane) {
  __syncthreads();
  float* merge_o = reinterpret_cast<float*>(merge);  // (kBlockM, D) fp32
  float* merge_m = merge_o + kBlockM * kHeadDim;     // (kWarpsN, kBlockM)
  float* merge_l = merge_m + kWarpsN * kBlockM;
#pragma unroll
  for (int r = 0; r < 2 * kMT; ++r) {
    const float sum = quad_sum(softmax.row_sum[r]);
    if (lane % 4 == 0) {
      const int row = local_row0 + 16 * (r / 2) + 8 * (r % 2);
      merge_m[warp_n * kBlockM + row] = softmax.row_max[r];
      merge_l[warp_n * kBlockM + row] = sum;
    }
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < 2 * kMT; ++r) {
    const int row = local_row0 + 16 * (r / 2) + 8 * (r % 2);
    float m_all = neg_inf();
    for (int w = 0; w < kWarpsN; ++w) m_all = fmaxf(m_all, merge_m[w * kBlockM + row]);
    const float m_all_log2 = guarded_max_log2(m_all, scale_log2);
    float l_all = 0.f;
    for (int w = 0; w < kWarpsN; ++w)
      l_all += merge_l[w * kBlockM + row] * part_weight(merge_m[w * kBlockM + row], m_all_log2, scale_log2);
    const float mine = part_weight(softmax.row_max[r], m_all_log2, scale_log2);
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) {
      o[r / 2][dt][2 * (r % 2)] *= mine;
      o[r / 2][dt][2 * (r % 2) + 1] *= mine;
    }
    softmax.row_max[r] = m_all;
    softmax.row_sum[r] = l_all;
  }
  // Sum the rescaled partial outputs, one warp column at a time (once per CTA: simplicity over speed).
  for (int w = 0; w < kWarpsN; ++w) {
    if (warp_n == w) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              float& dst = merge_o[(local_row0 + 16 * mt + 8 * h) * kHeadDim + 8 * dt + 2 * (lane % 4) + e];
              dst = (w == 0 ? 0.f : dst) + o[mt][dt][2 * h + e];
            }
    }
    __syncthreads();
  }
  if (warp_n != 0) return false;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          o[mt][dt][2 * h + e] =
              merge_o[(local_row0 + 16 * mt + 8 * h) * kHeadDim + 8 * dt + 2 * (lane % 4) + e];
  return true;
}

}  // namespace fa
