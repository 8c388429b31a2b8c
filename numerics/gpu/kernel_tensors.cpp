#include "numerics/gpu/kernel_tensors.hpp"

namespace fl::numerics::gpu {

namespace {

std::vector<float> to_float(std::vector<double> const& values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
  return out;
}

std::vector<double> to_double(std::vector<float> const& values) {
  return {values.begin(), values.end()};
}

}  // namespace

AttentionInputs to_attention_inputs(device::Problem const& problem, device::HostInputs const& inputs) {
  AttentionInputs out;
  out.shape = problem.shape;
  out.q = to_double(inputs.q);
  out.k = to_double(inputs.k);
  out.v = to_double(inputs.v);
  out.d_o = to_double(inputs.d_o);
  return out;
}

AttentionOutputs to_attention_outputs(device::HostOutputs const& outputs) {
  AttentionOutputs out;
  out.o = to_double(outputs.o);
  out.lse = to_double(outputs.lse);
  out.dq = to_double(outputs.dq);
  out.dk = to_double(outputs.dk);
  out.dv = to_double(outputs.dv);
  return out;
}

device::HostInputs to_host_inputs(AttentionInputs const& inputs, common::Precision dtype) {
  device::HostInputs out;
  out.dtype = common::storage_precision(dtype);
  out.q = to_float(inputs.q);
  out.k = to_float(inputs.k);
  out.v = to_float(inputs.v);
  return out;
}

}  // namespace fl::numerics::gpu
