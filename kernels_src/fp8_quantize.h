#pragma once
// FP8 quantisation on the device (fp8_quantize.cuh): the arithmetic that must equal numerics' host model
// bit for bit (numerics/incoherent_processing.cpp, numerics/fp8_quantization.cpp), in plain C++ that the
// host compiles too, so a CPU test (tests/kernels_src/fp8_quantize_test.cpp) holds the device's schedule
// against the host's. Only fa_arch.h.
//
// The rotation as the device computes it: a row is split over lanes_per_row aligned lanes of a warp, each
// holding kSliceElements consecutive elements in fp64 (the host's precision; fp32 would not be bit-exact
// once the sums need more than 24 bits). The host runs the Walsh-Hadamard butterflies stage by stage,
// half = 1, 2, ..., d / 2; the stages shorter than a slice stay inside the lane, the longer ones pair lane
// l with lane l ^ (half / kSliceElements) of the same row. Every stage performs the host's additions on
// the same operands, so the result is the same bits. 16 elements: two 16-byte loads of bf16 and one
// 16-byte store of codes per slice, 2-4 cross-lane stages (d 64-256) instead of a warp per row's 5-8.

#include "fa_arch.h"

namespace fp8q {

constexpr int kWarpLanes = fa::kWarpSize;
constexpr int kThreads = 128;  // 4 warps per CTA
constexpr int kWarps = kThreads / kWarpLanes;
constexpr int kSliceElements = 16;  // consecutive elements of a row per lane
constexpr int kTensors = 3;         // Q, K, V: blockIdx.y of every quantisation launch

// The largest finite values (numerics::max_finite): what a block's largest magnitude is scaled onto.
constexpr double kE4m3Max = 448.0;
constexpr double kE5m2Max = 57344.0;
constexpr double kLargestDouble = 1.7976931348623157e308;

// The lanes sharing one row: an aligned group of a warp, so a row's cross-lane partners are in its group.
template <int kHeadDim>
FA_HOST_DEVICE constexpr int lanes_per_row() {
  static_assert(kHeadDim >= kSliceElements && kHeadDim <= kWarpLanes * kSliceElements &&
                    (kHeadDim & (kHeadDim - 1)) == 0,
                "a power-of-two head dim of 16 to 512 (the Hadamard transform's size)");
  return kHeadDim / kSliceElements;
}

// Rows a CTA holds at once (one slice per thread): a "layer" of a descale block.
template <int kHeadDim>
FA_HOST_DEVICE constexpr int rows_per_layer() {
  return kThreads / lanes_per_row<kHeadDim>();
}

// The butterfly stages with half < kPerLane, inside one lane's slice, in the host's order.
template <int kPerLane>
FA_HOST_DEVICE inline void butterflies_in_lane(double (&x)[kPerLane]) {
  for (int half = 1; half < kPerLane; half *= 2)
    for (int block = 0; block < kPerLane; block += 2 * half)
      for (int e = block; e < block + half; ++e) {
        const double a = x[e];
        const double b = x[e + half];
        x[e] = a + b;
        x[e + half] = a - b;
      }
}

// One element of a stage with half >= kSliceElements: the lower lane of the pair (lane & (half /
// kSliceElements) == 0) holds a and keeps a + b; the upper holds b and keeps a - b. Both as partner +
// own_sign
// * own with own_sign +1 (lower) or -1 (upper): the product is exact, so with or without contraction into
// one fma it is the host's a + b or a - b (IEEE addition commutes, a - b is a + (-b)), one instruction and
// no select per element.
FA_HOST_DEVICE inline double own_sign(bool lower) {
  return lower ? 1.0 : -1.0;
}
FA_HOST_DEVICE inline double butterfly_across_lanes(double own, double partner, double own_sign) {
  return own_sign * own + partner;
}

// numerics::fp8_scale_for: the scale mapping amax onto max_finite, 1 when amax is 0 or not finite.
FA_HOST_DEVICE inline float scale_for_amax(double amax, double max_finite) {
  if (!(amax > 0.0) || !(amax <= kLargestDouble)) return 1.0f;
  return float(max_finite / amax);
}

FA_HOST_DEVICE inline int blocks_per_matrix(int rows, int block_rows) {
  return (rows + block_rows - 1) / block_rows;
}

}  // namespace fp8q
