#include "tuner/run/fp8_operands.hpp"

#include <cuda_fp8.h>

#include <stdexcept>

#include "numerics/quantized_operands.hpp"

namespace fl::tuner {

namespace {

std::vector<std::uint8_t> codes_of(std::vector<float> const& values, numerics::Precision format) {
  std::vector<std::uint8_t> codes(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) codes[i] = fp8_code(values[i], format);
  return codes;
}

// numerics' one descale per row, back to the kernel's one per tensor or per (matrix, block of rows): the
// descale of a block is that of its first row.
std::vector<float> descales_of(std::vector<float> const& per_row, int matrices, int rows, Problem const& p) {
  if (p.fp8.scaling == numerics::Fp8Scaling::per_tensor) return {per_row.front()};
  int const block_rows = p.fp8.block_rows;
  int const blocks = (rows + block_rows - 1) / block_rows;
  std::vector<float> out;
  out.reserve(std::size_t(matrices) * std::size_t(blocks));
  for (int m = 0; m < matrices; ++m)
    for (int b = 0; b < blocks; ++b)
      out.push_back(per_row[std::size_t(m) * rows + std::size_t(b) * block_rows]);
  return out;
}

}  // namespace

std::uint8_t fp8_code(float value, numerics::Precision format) {
  return __nv_cvt_float_to_fp8(value, __NV_SATFINITE,
                               format == numerics::Precision::fp8_e5m2 ? __NV_E5M2 : __NV_E4M3);
}

Fp8Operands quantize_fp8_operands(Problem const& problem, HostInputs const& inputs) {
  if (!numerics::is_fp8(problem.dtype))
    throw std::invalid_argument("quantize_fp8_operands: dtype is not FP8");
  auto const& s = problem.shape;
  if (inputs.q.size() != s.q_elements() || inputs.k.size() != s.kv_elements() ||
      inputs.v.size() != s.kv_elements())
    throw std::invalid_argument("quantize_fp8_operands: Q, K, V sizes do not match " + describe(problem));
  // numerics' operands, as its emulations and tolerance model see them (the incoherent rotation of Q and K
  // included: (Q M)(K M)^T = Q K^T), encoded as the kernel reads them.
  numerics::AttentionInputs in;
  in.shape = s;
  in.q.assign(inputs.q.begin(), inputs.q.end());
  in.k.assign(inputs.k.begin(), inputs.k.end());
  in.v.assign(inputs.v.begin(), inputs.v.end());
  auto const ops = numerics::quantize_operands(in, operand_recipe_of(problem));
  int const q_mats = s.batch * s.heads_q, kv_mats = s.batch * s.heads_kv;
  Fp8Operands out;
  out.q = codes_of(ops.q, problem.dtype);
  out.k = codes_of(ops.k, problem.dtype);
  if (problem.fp8.bf16_pv)
    out.v_bf16 = encode_16bit(ops.v, numerics::Precision::bf16);
  else
    out.v = codes_of(ops.v, problem.dtype);
  out.q_descale = descales_of(ops.q_descale, q_mats, s.seqlen_q, problem);
  out.k_descale = descales_of(ops.k_descale, kv_mats, s.seqlen_k, problem);
  out.v_descale = descales_of(ops.v_descale, kv_mats, s.seqlen_k, problem);
  out.per_tensor = problem.fp8.scaling == numerics::Fp8Scaling::per_tensor;
  out.block_rows = out.per_tensor ? 0 : problem.fp8.block_rows;
  return out;
}

}  // namespace fl::tuner
