#include "device/run/fp8_upload.hpp"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "device/families/fp8_quantize_launches.hpp"
#include "device/run/buffer_upload.hpp"
#include "device/run/fp8_v_layout.hpp"

namespace fl::device {

using namespace run_detail;

namespace {

// Quantised on the device: the bf16 inputs, the signs, empty descale arrays; the fp8_quantize launches
// write the codes into dp.q, dp.k, dp.v and the factors into the arrays.
runtime::Status upload_fp8_sources(DeviceProblem& dp, Problem const& problem, HostInputs const& inputs,
                                   Fp8Operands const& operands) {
  auto const bf16 = common::Precision::bf16;  // the storage precision of every FP8 dtype
  bool const encoded = encoded_for(problem, inputs);
  fa::AttentionParams& p = dp.params;
  std::optional<runtime::DeviceBuffer>* sources[] = {&dp.q_source, &dp.k_source, &dp.v_source};
  std::optional<runtime::DeviceBuffer>* descales[] = {&dp.q_descale, &dp.k_descale, &dp.v_descale};
  std::vector<float> const* values[] = {&inputs.q, &inputs.k, &inputs.v};
  runtime::DeviceBuffer* codes[] = {&dp.q, &dp.k, &dp.v};
  for (int t = 0; t < 3; ++t) {
    if (auto st = allocate_slot(*sources[t], kBytes16 * values[t]->size()); !st) return st;
    if (encoded) {
      auto const& bits = t == 0 ? inputs.encoded->q : t == 1 ? inputs.encoded->k : inputs.encoded->v;
      if (auto st = upload_bits(**sources[t], bits); !st) return st;
    } else if (auto st = upload_16bit(**sources[t], *values[t], bf16); !st) {
      return st;
    }
    if (auto st = allocate_slot(*descales[t], sizeof(float) * std::size_t(fp8_descale_blocks(problem, t)));
        !st)
      return st;
    p.fp8_source[t] = as_pointer<void const>(**sources[t]);
    p.fp8_codes[t] = as_pointer<void>(*codes[t]);
    p.fp8_descales[t] = as_pointer<float>(**descales[t]);
  }
  p.q_descale_blocks = p.fp8_descales[0];
  p.k_descale_blocks = p.fp8_descales[1];
  p.v_descale_blocks = p.fp8_descales[2];
  p.descale_block_rows = descale_block_rows(problem);
  p.fp8_rotation_signs = nullptr;
  if (problem.fp8.incoherent) {
    auto const& signs = operands.rotation_signs;
    if (signs.size() != std::size_t(problem.shape.head_dim))
      return runtime::Error{"input",
                            "an incoherent FP8 problem quantised on the device needs the transform's " +
                                std::to_string(problem.shape.head_dim) + " signs, got " +
                                std::to_string(signs.size()),
                            ""};
    auto b = upload_new(signs);
    if (!b) return b.error();
    dp.rotation_signs.emplace(std::move(b.value()));
    p.fp8_rotation_signs = as_pointer<float const>(*dp.rotation_signs);
  }
  return {};
}

// The codes fit the problem's buffers: a caller's operands made for another problem would not.
bool codes_fit(Problem const& problem, Fp8Operands const& operands) {
  auto const& s = problem.shape;
  bool const v_fits =
      problem.fp8.bf16_pv ? operands.v_bf16.size() == s.kv_elements() : operands.v.size() == s.kv_elements();
  return operands.q.size() == s.q_elements() && operands.k.size() == s.kv_elements() && v_fits &&
         !operands.q_descale.empty() && !operands.k_descale.empty() && !operands.v_descale.empty();
}

}  // namespace

// Host-quantised: Q, K, V codes into the already allocated buffers, the descale factors into params (per
// tensor) or new device arrays (per block).
runtime::Status upload_fp8(DeviceProblem& dp, Problem const& problem, HostInputs const& inputs,
                           Fp8Operands const& operands) {
  fa::AttentionParams& p = dp.params;
  p.p_scale = operands.p_scale;
  if (quantizes_on_device(problem)) return upload_fp8_sources(dp, problem, inputs, operands);
  if (!codes_fit(problem, operands))
    return runtime::Error{"input", "FP8 operands do not match " + describe(problem), ""};
  if (auto st = dp.q.upload(operands.q.data(), operands.q.size()); !st) return st;
  if (auto st = dp.k.upload(operands.k.data(), operands.k.size()); !st) return st;
  if (pretransposed_v(problem)) {  // V^T, made here from the codes (not timed)
    auto const vt = transposed_v_codes(problem.shape, operands.v);
    if (auto st = dp.v.upload(vt.data(), vt.size()); !st) return st;
  } else if (auto st = problem.fp8.bf16_pv ? upload_bits(dp.v, operands.v_bf16)
                                           : dp.v.upload(operands.v.data(), operands.v.size());
             !st) {
    return st;
  }
  if (operands.per_tensor) {
    p.q_descale = operands.q_descale.front();
    p.k_descale = operands.k_descale.front();
    p.v_descale = operands.v_descale.front();
    return {};
  }
  p.descale_block_rows = operands.block_rows;
  for (auto [slot, values, pointer] : {std::tuple{&dp.q_descale, &operands.q_descale, &p.q_descale_blocks},
                                       std::tuple{&dp.k_descale, &operands.k_descale, &p.k_descale_blocks},
                                       std::tuple{&dp.v_descale, &operands.v_descale, &p.v_descale_blocks}}) {
    auto b = upload_new(*values);
    if (!b) return b.error();
    slot->emplace(std::move(b.value()));
    *pointer = as_pointer<float const>(**slot);
  }
  return {};
}

}  // namespace fl::device
