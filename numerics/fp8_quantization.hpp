#pragma once
// FP8 quantisation as FP8 attention kernels do it: x is multiplied by a scale that maps the largest
// magnitude of its block onto the format's largest finite value, converted with saturation (e4m3: 448,
// e5m2: 57344) through CUDA's own __nv_cvt_float_to_fp8, and multiplied back by descale = 1 / scale
// inside the kernel. Per-tensor scaling uses one scale per tensor; per-block scaling one per block of
// `block_rows` consecutive rows of each (batch, head) matrix, the tile a kernel loads (FlashAttention-3's
// "block quantization").
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/precision.hpp"

namespace fl::numerics {

// A (matrices, rows, cols) tensor in FP8: `codes` are FP8 values (exactly representable in `format`) of
// x * scale; the value a kernel computes with is codes * descale of the row's block.
struct Fp8Tensor {
  common::Precision format = common::Precision::fp8_e4m3;
  int matrices = 0;
  int rows = 0;        // rows per matrix (sequence length)
  int cols = 0;        // head dimension
  int block_rows = 0;  // rows per scaling block; rows * matrices blocks share one scale when per-tensor
  bool per_tensor = true;
  std::vector<float> codes;
  std::vector<float> scales;    // one per block
  std::vector<float> descales;  // 1 / scale, one per block

  std::size_t block_of_row(std::size_t flat_row) const;
  float descale_of_row(std::size_t flat_row) const { return descales[block_of_row(flat_row)]; }
  std::vector<double> dequantized() const;  // codes * descale, same layout as the input
};

// `x` is (matrices, rows, cols) row-major. `block_rows` is used by per-block scaling only (> 0).
// A block whose largest magnitude is 0 (or not finite) gets scale 1.
Fp8Tensor quantize_fp8(std::span<double const> x, int matrices, int rows, int cols, common::Precision format,
                       common::Fp8Scaling scaling, int block_rows);

// The scale mapping `amax` onto the format's largest finite value (1 when amax is 0 or not finite).
float fp8_scale_for(common::Precision format, double amax);

// Half the spacing of the format's subnormals: the largest absolute rounding error of a value below the
// smallest normal (e4m3 2^-10, e5m2 2^-17, fp16 2^-25, bf16 2^-134, fp32 2^-150).
double subnormal_half_step(common::Precision p);

}  // namespace fl::numerics
