#pragma once
// Q, K, V as an FP8 kernel reads them: the host inputs (bf16 values) optionally rotated by the incoherent
// transform (Q and K), quantised with numerics::quantize_fp8 (per tensor or per block, Problem::fp8),
// stored as one-byte codes, with the descale factors fa::AttentionParams carries (numerics' layout:
// per-block factors (B, H, ceil(N / block_rows))). With bf16 P V (Problem::fp8.bf16_pv) V is bf16 instead,
// as numerics' quantize_operands makes it for the bf16_pv variant.
#include <cstdint>
#include <vector>

#include "tuner/problem.hpp"
#include "tuner/run/host_tensors.hpp"

namespace fl::tuner {

struct Fp8Operands {
  std::vector<std::uint8_t> q, k, v;  // codes, (B, H, N, D); v empty with bf16 P V (v_bf16)
  std::vector<std::uint16_t> v_bf16;  // Problem::fp8.bf16_pv: V's bf16 bits (its descales are 1)
  // One factor per tensor (size 1) or per block.
  std::vector<float> q_descale, k_descale, v_descale;
  bool per_tensor = true;
  int block_rows = 0;  // rows per block (per_tensor: N of the tensor)
};

// Throws std::invalid_argument when the dtype is not FP8 or the sizes do not match the shape.
Fp8Operands quantize_fp8_operands(Problem const& problem, HostInputs const& inputs);

// The FP8 encoding of a value exactly representable in `format` (CUDA's host conversion, saturating).
std::uint8_t fp8_code(float value, numerics::Precision format);

}  // namespace fl::tuner
