#include "numerics/gpu/kernel_fp8_operands.hpp"

#include <stdexcept>

#include "device/families/fp8_quantize_launches.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/incoherent_processing.hpp"
#include "numerics/quantized_operands.hpp"

namespace fl::numerics::gpu {

namespace {

std::vector<std::uint8_t> codes_of(std::vector<float> const& values, common::Precision format) {
  std::vector<std::uint8_t> codes(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) codes[i] = device::fp8_code(values[i], format);
  return codes;
}

// numerics' one descale per row, back to the kernel's one per tensor or per (matrix, block of rows): the
// descale of a block is that of its first row.
std::vector<float> descales_of(std::vector<float> const& per_row, int matrices, int rows,
                               device::Problem const& p) {
  if (p.fp8.scaling == common::Fp8Scaling::per_tensor) return {per_row.front()};
  int const block_rows = p.fp8.block_rows;
  int const blocks = (rows + block_rows - 1) / block_rows;
  std::vector<float> out;
  out.reserve(std::size_t(matrices) * std::size_t(blocks));
  for (int m = 0; m < matrices; ++m)
    for (int b = 0; b < blocks; ++b)
      out.push_back(per_row[std::size_t(m) * rows + std::size_t(b) * block_rows]);
  return out;
}

// The factors every FP8 kernel is given, however its operands are quantised.
device::Fp8Operands scale_and_signs(device::Problem const& problem) {
  device::Fp8Operands out;
  out.p_scale = static_cast<float>(recipe_for(problem.dtype).probability_scale);
  if (problem.fp8.incoherent)
    for (double sign : make_incoherent_transform(problem.shape.head_dim, problem.fp8.incoherent_seed).signs)
      out.rotation_signs.push_back(float(sign));
  return out;
}

}  // namespace

device::Fp8Operands quantize_fp8_operands(device::Problem const& problem, device::HostInputs const& inputs) {
  if (!common::is_fp8(problem.dtype)) throw std::invalid_argument("quantize_fp8_operands: dtype is not FP8");
  auto const& s = problem.shape;
  if (inputs.q.size() != s.q_elements() || inputs.k.size() != s.kv_elements() ||
      inputs.v.size() != s.kv_elements())
    throw std::invalid_argument("quantize_fp8_operands: Q, K, V sizes do not match " +
                                device::describe(problem));
  // numerics' operands, as its emulations and tolerance model see them (the incoherent rotation of Q and K
  // included: (Q M)(K M)^T = Q K^T), encoded as the kernel reads them.
  AttentionInputs in;
  in.shape = s;
  in.q.assign(inputs.q.begin(), inputs.q.end());
  in.k.assign(inputs.k.begin(), inputs.k.end());
  in.v.assign(inputs.v.begin(), inputs.v.end());
  auto const ops = quantize_operands(in, operand_recipe_of(problem));
  device::Fp8Operands out = scale_and_signs(problem);
  int const q_mats = s.batch * s.heads_q, kv_mats = s.batch * s.heads_kv;
  out.q = codes_of(ops.q, problem.dtype);
  out.k = codes_of(ops.k, problem.dtype);
  if (problem.fp8.bf16_pv)
    out.v_bf16 = device::encode_16bit(ops.v, common::Precision::bf16);
  else
    out.v = codes_of(ops.v, problem.dtype);
  out.q_descale = descales_of(ops.q_descale, q_mats, s.seqlen_q, problem);
  out.k_descale = descales_of(ops.k_descale, kv_mats, s.seqlen_k, problem);
  out.v_descale = descales_of(ops.v_descale, kv_mats, s.seqlen_k, problem);
  out.per_tensor = problem.fp8.scaling == common::Fp8Scaling::per_tensor;
  out.block_rows = out.per_tensor ? 0 : problem.fp8.block_rows;
  return out;
}

std::optional<device::Fp8Operands> fp8_operands_for(device::Problem const& problem,
                                                    device::HostInputs const& inputs) {
  if (!common::is_fp8(problem.dtype)) return std::nullopt;
  if (device::quantizes_on_device(problem)) return scale_and_signs(problem);
  return quantize_fp8_operands(problem, inputs);
}

}  // namespace fl::numerics::gpu
