#include "tuner/run/attention_io.hpp"

namespace fl::tuner {

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

HostInputs to_host_inputs(numerics::AttentionInputs const& inputs) {
  HostInputs out;
  out.q = to_float(inputs.q);
  out.k = to_float(inputs.k);
  out.v = to_float(inputs.v);
  return out;
}

numerics::AttentionOutputs to_attention_outputs(HostOutputs const& outputs) {
  numerics::AttentionOutputs out;
  out.o = to_double(outputs.o);
  out.lse = to_double(outputs.lse);
  return out;
}

}  // namespace fl::tuner
