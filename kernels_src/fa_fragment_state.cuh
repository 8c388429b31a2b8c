#pragma once
// fa1's running state between launches (O in fp32, m, l) in device memory, in the order the registers
// hold it: O's mma.sync C fragments (fa_softmax.cuh's map) of each 16-row tile, lane by lane. Only fa1
// reads it back, so the order is ours: one 16-byte load or store per (row tile, 8-column tile) and lane,
// 512 contiguous bytes per warp instruction (row-major, each quad wrote 8-byte pairs: 4x the instructions).
// The bytes are those of a row-major (B, H_q, N_q16, D) fp32 tensor: FA-1's round trip, nothing removed.
//
// Rows: N_q16 = N_q rounded up to 16 per (batch, head), so that a 16-row tile never reaches the next
// head's rows; a tile whose first row is >= N_q is neither read nor written (warp-uniform), the rows of a
// partial tile past N_q are (zero-filled Q rows: finite state, never output). m and l: one float per row
// each, the full row sum (quad-reduced before the store; read back into lane 0 of the quad).
#include "fa1_config.h"
#include "fa_params.h"
#include "fa_softmax.cuh"

namespace fa {

// Query rows per (batch, head) in fa1's state: fa1_config.h's rule, which the host sizes the scratch with.
__device__ __forceinline__ int state_rows_per_head(const AttentionParams& p) {
  return fa1::state_rows_per_head(p.seqlen_q);
}

// warp_row0: the state row of the warp's first tile ((batch, head) slice base + first query row).
// warp_query_row0: the same row as a query index (the tiles at or past seqlen_q are skipped).
template <int kHeadDim, int kMT, int kDT>
__device__ __forceinline__ void load_fragment_state(const AttentionParams& p, long long warp_row0,
                                                    int warp_query_row0, float (&o)[kMT][kDT][4],
                                                    OnlineSoftmax<kMT>& softmax, int lane) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
    if (warp_query_row0 + 16 * mt >= p.seqlen_q) continue;  // never written: the tile is past N_q
    const long long tile_row = warp_row0 + 16 * mt;
    const float4* src = reinterpret_cast<const float4*>(p.scratch_o + tile_row * kHeadDim) + lane;
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) {
      const float4 v = __ldcg(src + 32 * dt);  // L2 only: each element is read once per launch
      o[mt][dt][0] = v.x;
      o[mt][dt][1] = v.y;
      o[mt][dt][2] = v.z;
      o[mt][dt][3] = v.w;
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long row = tile_row + lane / 4 + 8 * h;
      softmax.row_max[2 * mt + h] = __ldcg(p.scratch_m + row);
      const float sum = __ldcg(p.scratch_l + row);
      softmax.row_sum[2 * mt + h] = lane % 4 == 0 ? sum : 0.f;  // quad-partial form
    }
  }
}

template <int kHeadDim, int kMT, int kDT>
__device__ __forceinline__ void store_fragment_state(const AttentionParams& p, long long warp_row0,
                                                     int warp_query_row0, const float (&o)[kMT][kDT][4],
                                                     const OnlineSoftmax<kMT>& softmax, int lane) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
    float sums[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) sums[h] = quad_sum(softmax.row_sum[2 * mt + h]);  // all lanes, no branch
    if (warp_query_row0 + 16 * mt >= p.seqlen_q) continue;
    const long long tile_row = warp_row0 + 16 * mt;
    float4* dst = reinterpret_cast<float4*>(p.scratch_o + tile_row * kHeadDim) + lane;
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt)
      __stcg(dst + 32 * dt, make_float4(o[mt][dt][0], o[mt][dt][1], o[mt][dt][2], o[mt][dt][3]));
    if (lane % 4 == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long row = tile_row + lane / 4 + 8 * h;
        p.scratch_m[row] = softmax.row_max[2 * mt + h];
        p.scratch_l[row] = sums[h];
      }
    }
  }
}

}  // namespace fa
