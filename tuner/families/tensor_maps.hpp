#pragma once
// The TMA families' second kernel argument: one 128-byte tensor map per (B, H, N, D) tensor of the launch,
// encoded by the driver (runtime/tensor_map.hpp) in a fixed order that the kernel's descriptor struct
// (kernels_src/fa_tma_params.h) mirrors. Boxes are box_rows x 64 columns (one 128-byte swizzle span).
// fa3_sm90_bwd encodes through it; fa3_sm90's own copy of this loop (its FP8 maps were being changed when
// this was written) is the next to move here.
#include <vector>

#include "runtime/result.hpp"
#include "tuner/problem.hpp"

namespace fl::tuner {

struct TensorMapSpec {
  void const* base;
  int heads, rows;
  long long batch_stride, head_stride, row_stride;  // elements
  unsigned box_rows;
};

// The maps' bytes, concatenated in the order of `tensors`, for the problem's batch, head dim and dtype.
runtime::Result<std::vector<unsigned char>> encode_tensor_maps(Problem const& problem,
                                                               std::vector<TensorMapSpec> const& tensors);

}  // namespace fl::tuner
