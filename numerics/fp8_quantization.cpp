#include "numerics/fp8_quantization.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "numerics/precision.hpp"

namespace fl::numerics {

std::size_t Fp8Tensor::block_of_row(std::size_t flat_row) const {
  if (per_tensor) return 0;
  std::size_t const blocks_per_matrix =
      (std::size_t(rows) + std::size_t(block_rows) - 1) / std::size_t(block_rows);
  std::size_t const matrix = flat_row / std::size_t(rows);
  std::size_t const row = flat_row % std::size_t(rows);
  return matrix * blocks_per_matrix + row / std::size_t(block_rows);
}

std::vector<double> Fp8Tensor::dequantized() const {
  std::vector<double> out(codes.size());
  std::size_t const c = std::size_t(cols);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = double(codes[i] * descale_of_row(i / c));
  return out;
}

float fp8_scale_for(common::Precision format, double amax) {
  if (!(amax > 0.0) || !std::isfinite(amax)) return 1.0f;
  return float(max_finite(format) / amax);
}

double subnormal_half_step(common::Precision p) {
  switch (p) {
    case common::Precision::fp32:
      return std::ldexp(1.0, -150);
    case common::Precision::fp16:
      return std::ldexp(1.0, -25);
    case common::Precision::bf16:
      return std::ldexp(1.0, -134);
    case common::Precision::fp8_e4m3:
      return std::ldexp(1.0, -10);
    case common::Precision::fp8_e5m2:
      return std::ldexp(1.0, -17);
  }
  return 0.0;
}

Fp8Tensor quantize_fp8(std::span<double const> x, int matrices, int rows, int cols, common::Precision format,
                       common::Fp8Scaling scaling, int block_rows) {
  if (!is_fp8(format)) throw std::invalid_argument("quantize_fp8: format must be fp8_e4m3 or fp8_e5m2");
  if (x.size() != std::size_t(matrices) * std::size_t(rows) * std::size_t(cols))
    throw std::invalid_argument("quantize_fp8: size does not match matrices * rows * cols");
  if (scaling == common::Fp8Scaling::per_block && block_rows <= 0)
    throw std::invalid_argument("quantize_fp8: per-block scaling needs block_rows > 0");
  Fp8Tensor t;
  t.format = format;
  t.matrices = matrices;
  t.rows = rows;
  t.cols = cols;
  t.per_tensor = scaling == common::Fp8Scaling::per_tensor;
  t.block_rows = t.per_tensor ? rows : block_rows;
  std::size_t const blocks =
      t.per_tensor ? 1
                   : std::size_t(matrices) *
                         ((std::size_t(rows) + std::size_t(block_rows) - 1) / std::size_t(block_rows));
  std::vector<double> amax(blocks, 0.0);
  std::size_t const c = std::size_t(cols);
  for (std::size_t i = 0; i < x.size(); ++i) {
    double& a = amax[t.block_of_row(i / c)];
    a = std::max(a, std::fabs(x[i]));
  }
  t.scales.resize(blocks);
  t.descales.resize(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    t.scales[b] = fp8_scale_for(format, amax[b]);
    t.descales[b] = 1.0f / t.scales[b];
  }
  t.codes.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    t.codes[i] = round_to(format, float(x[i]) * t.scales[t.block_of_row(i / c)]);
  return t;
}

}  // namespace fl::numerics
