#include "numerics/gpu/kernel_tensors.hpp"

#include <algorithm>
#include <cstddef>

#include "common/parallel_for.hpp"

namespace fl::numerics::gpu {

namespace {

std::vector<float> to_float(std::vector<double> const& values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
  return out;
}

// In parallel: a headline backward's outputs are 134M values, converted once per tuning candidate.
void assign_double(std::vector<float> const& values, std::vector<double>& out, int threads = 0) {
  out.resize(values.size());
  common::parallel_for(values.size(), common::elementwise_threads(values.size(), threads),
                       [&](std::size_t begin, std::size_t end) {
                         std::copy(values.begin() + std::ptrdiff_t(begin),
                                   values.begin() + std::ptrdiff_t(end), out.begin() + std::ptrdiff_t(begin));
                       });
}

std::vector<double> to_double(std::vector<float> const& values) {
  std::vector<double> out;
  assign_double(values, out);
  return out;
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
  assign_attention_outputs(outputs, out);
  return out;
}

void assign_attention_outputs(device::HostOutputs const& outputs, AttentionOutputs& into, int threads) {
  assign_double(outputs.o, into.o, threads);
  assign_double(outputs.lse, into.lse, threads);
  assign_double(outputs.dq, into.dq, threads);
  assign_double(outputs.dk, into.dk, threads);
  assign_double(outputs.dv, into.dv, threads);
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
