#pragma once
// Epilogue of the forward kernels: normalise O once by the row sum, write O and the log-sum-exp.
//
// Two paths for O (a tunable): straight from registers (4-byte stores; each quad writes 16 contiguous
// bytes of a row, so a warp's store touches 8 rows = 8 half-used 32-byte sectors), or staged through
// the warp's own rows of a swizzled shared tile and written back as 16-byte, fully coalesced stores.
// Both are warp-local: each warp owns its rows, so no block-wide barrier is needed.
#include "fa_copy.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_types.cuh"

namespace fa {

// Whether O is divided by the running sum after every key block (a bug) instead of once in the epilogue.
#ifdef FA_MUTANT_NORMALIZE_IN_LOOP
constexpr bool kNormalizeInLoop =
    true;  // [normalize-in-loop] O divided by l after every block, not at the end
#else
constexpr bool kNormalizeInLoop = false;
#endif

// [normalize-in-loop]'s effect, for every family: o divided by the current row sums (quad-partial, times
// `sum_factor`: FP8's p_scale) after a block's P V, as the CPU emulator does. Called only under
// kNormalizeInLoop (after_key_block; fa3_sm90 calls it itself); the end then no longer divides
// (normalise_and_write_lse's divide_by_sum, epilogue_inverse_sum, fp8_output_factor).
template <int kMT, int kDT>
__device__ __forceinline__ void divide_by_row_sums(float (&o)[kMT][kDT][4], const float (&row_sum)[2 * kMT],
                                                   float sum_factor = 1.f) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float sum = quad_sum(row_sum[2 * mt + h]) * sum_factor;
      const float inv = sum == 0.f ? 0.f : 1.f / sum;
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        o[mt][dt][2 * h] *= inv;
        o[mt][dt][2 * h + 1] *= inv;
      }
    }
}

// What the mainloop does to O after a key block's P V: nothing, except under [normalize-in-loop].
template <int kMT, int kDT>
__device__ __forceinline__ void after_key_block(float (&o)[kMT][kDT][4], const float (&row_sum)[2 * kMT],
                                                float sum_factor = 1.f) {
  if constexpr (kNormalizeInLoop) divide_by_row_sums(o, row_sum, sum_factor);
}

// 1/l for the epilogue of a row with the full sum l: 0 for a fully masked row (l = 0), 1 when the loop
// divided already ([normalize-in-loop]).
__device__ __forceinline__ float epilogue_inverse_sum(float l) {
  return l == 0.f ? 0.f : (kNormalizeInLoop ? 1.f : 1.f / l);
}

// FP8: the factor O is multiplied by before the epilogue's 1/l: v_descale / p_scale (O = P V v_descale /
// (l p_scale)); [normalize-in-loop] already divided by l p_scale in the loop.
__device__ __forceinline__ float fp8_output_factor(float v_descale, float p_scale) {
  return v_descale * (kNormalizeInLoop ? 1.f : 1.f / p_scale);
}

// Natural-log LSE of one row from its running max (raw units) and full row sum. A fully masked row
// (l = 0) has LSE = -inf, which the backward reads as "every P of this row is 0".
// LSE = M ln 2 + ln l with M the very max_log2 the row's p were computed against (so M's own rounding
// cancels) and one FFMA for M ln 2 + ln l. The earlier (M + log2 l) * ln 2 rounded twice at the scale of
// M, which is 1.44x larger in log2 units than the LSE in nats: on the H200 the all_negative inputs
// (LSE ~ -360) came out over the verifier's bound by up to 1.47x, i.e. by that factor.
__device__ __forceinline__ float row_lse(float row_max, float row_sum, float scale_log2) {
  if (row_sum == 0.f) return neg_inf();
#ifdef FA_MUTANT_LSE_WITHOUT_MAX
  return __logf(row_sum);  // [lse-without-max] LSE stored as log(l), the max forgotten
#else
  return fmaf(max_log2(row_max, scale_log2), kLn2, __log2f(row_sum) * kLn2);
#endif
}

// Reduces the quad-partial row sums, scales o by 1/l (0 for a fully masked row) and writes the LSE
// of rows row0 + 16 mt + 8 h that are < seqlen_q. lse_row0 points at this thread's row0 entry.
template <int kMT, int kDT>
__device__ __forceinline__ void normalise_and_write_lse(float (&o)[kMT][kDT][4], const OnlineSoftmax<kMT>& sm,
                                                        bool sums_are_partial, bool divide_by_sum,
                                                        float scale_log2, float* lse_row0,
                                                        int rows_valid_from_row0, int lane) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = 2 * mt + h;
      const float sum = sums_are_partial ? quad_sum(sm.row_sum[r]) : sm.row_sum[r];
      const float inv = sum == 0.f ? 0.f : (divide_by_sum ? 1.f / sum : 1.f);
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        o[mt][dt][2 * h] *= inv;
        o[mt][dt][2 * h + 1] *= inv;
      }
      const int row = 16 * mt + 8 * h;
      if (lane % 4 == 0 && row < rows_valid_from_row0)
        lse_row0[row] = row_lse(sm.row_max[r], sum, scale_log2);
    }
  }
}

// normalise_and_write_lse as every sm80-era family calls it: divided by the sum unless the loop did.
template <int kMT, int kDT>
__device__ __forceinline__ void normalise_and_write_lse(float (&o)[kMT][kDT][4], const OnlineSoftmax<kMT>& sm,
                                                        bool sums_are_partial, float scale_log2,
                                                        float* lse_row0, int rows_valid_from_row0, int lane) {
  normalise_and_write_lse(o, sm, sums_are_partial, !kNormalizeInLoop, scale_log2, lse_row0,
                          rows_valid_from_row0, lane);
}

// Two adjacent columns of a C fragment row to memory: a 4-byte pair of 16-bit values, or 8 bytes of fp32
// (naive.cu's fp32 S).
template <typename Element>
__device__ __forceinline__ void store_pair(Element* dst, float a, float b) {
  *reinterpret_cast<unsigned*>(dst) = ElementTraits<Element>::pack(a, b);
}
__device__ __forceinline__ void store_pair(float* dst, float a, float b) {
  *reinterpret_cast<float2*>(dst) = make_float2(a, b);
}

// O straight from registers. o_row0: this thread's row0 (…+ g) and column 2c; rows past rows_valid skipped.
template <typename Element, int kMT, int kDT>
__device__ __forceinline__ void store_o_from_registers(const float (&o)[kMT][kDT][4], Element* o_row0,
                                                       long long row_stride, int rows_valid_from_row0) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = 16 * mt + 8 * h;
      if (row >= rows_valid_from_row0) continue;
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt)
        store_pair(o_row0 + row * row_stride + 8 * dt, o[mt][dt][2 * h], o[mt][dt][2 * h + 1]);
    }
  }
}

// O through the warp's rows of a swizzled shared tile (rows of kDT 16-byte chunks... kDT = D / 8), then
// 16-byte coalesced stores. warp_tile: shared address of the warp's first row (a multiple of 8 rows into
// the tile, so the swizzle phase is the tile's). o_warp_row0: global address of that row, column 0.
template <typename Element, int kMT, int kDT>
__device__ __forceinline__ void store_o_through_shared(const float (&o)[kMT][kDT][4], unsigned warp_tile,
                                                       Element* o_warp_row0, long long row_stride,
                                                       int rows_valid_from_warp_row0, int lane) {
  constexpr int kChunks = kDT;  // one 8-column C tile of 16-bit elements is one 16-byte chunk
  const int g = lane / 4, c = lane % 4;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = 16 * mt + 8 * h + g;
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        const unsigned v = ElementTraits<Element>::pack(o[mt][dt][2 * h], o[mt][dt][2 * h + 1]);
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(warp_tile + swizzled_offset<kChunks>(row, dt) + 4 * c),
                     "r"(v));
      }
    }
  }
  __syncwarp();
  constexpr int kWarpChunks = 16 * kMT * kChunks;
  static_assert(kWarpChunks % 32 == 0, "whole warp-wide rounds of 16-byte stores");
#pragma unroll
  for (int i = 0; i < kWarpChunks / 32; ++i) {
    const int idx = 32 * i + lane;
    const int row = idx / kChunks, chunk = idx % kChunks;
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(warp_tile + swizzled_offset<kChunks>(row, chunk)));
    if (row < rows_valid_from_warp_row0)
      *reinterpret_cast<uint4*>(o_warp_row0 + row * row_stride + 8 * chunk) = v;
  }
}

// FP8's O layout (fa2_fp8_fwd.cu: V transposed in registers): this lane owns columns 16 dp + 4c .. 4c+3 of
// rows g and g+8 of each row tile, the even C tile 2dp columns 4c and 4c+2, the odd tile 2dp+1 columns
// 4c+1 and 4c+3; stored as 8-byte runs (a quad writes 32 contiguous bytes of a row). o_row0: this thread's
// row0 (… + g), column 4c. (The row stride is read from p at each store, as the kernel's own loop did: a
// stride argument changed the address arithmetic ptxas was given.)
template <typename Element, int kMT, int kDT>
__device__ __forceinline__ void store_o_column_quads(const float (&o)[kMT][kDT][4], Element* o_row0,
                                                     const AttentionParams& p, int rows_valid_from_row0) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = 16 * mt + 8 * h;
      if (row >= rows_valid_from_row0) continue;
#pragma unroll
      for (int dp = 0; dp < kDT / 2; ++dp) {
        uint2 packed;
        packed.x = ElementTraits<Element>::pack(o[mt][2 * dp][2 * h], o[mt][2 * dp + 1][2 * h]);
        packed.y = ElementTraits<Element>::pack(o[mt][2 * dp][2 * h + 1], o[mt][2 * dp + 1][2 * h + 1]);
        *reinterpret_cast<uint2*>(o_row0 + row * p.o_row_stride + 16 * dp) = packed;
      }
    }
}

// One row (tile mt, half h) of this thread's online-softmax state to the fp32 scratch rows at index idx
// (flash_decode's partials; fa1 keeps its own order, fa_fragment_state.cuh): m, the row's full sum
// (quad-reduced by the caller, on all 32 lanes before any branch), and this thread's O columns, unnormalised.
template <int kHeadDim, int kMT, int kDT>
__device__ __forceinline__ void store_row_state(const AttentionParams& p, long long idx,
                                                const float (&o)[kMT][kDT][4], int mt, int h, float row_max,
                                                float sum, int lane) {
  if (lane % 4 == 0) {
    p.scratch_m[idx] = row_max;
    p.scratch_l[idx] = sum;
  }
#pragma unroll
  for (int dt = 0; dt < kDT; ++dt)
    *reinterpret_cast<float2*>(p.scratch_o + idx * kHeadDim + 8 * dt + 2 * (lane % 4)) =
        make_float2(o[mt][dt][2 * h], o[mt][dt][2 * h + 1]);
}

}  // namespace fa
