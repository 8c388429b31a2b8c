#include "numerics/gpu/kernel_inputs.hpp"

#include <random>

#include "numerics/gpu/kernel_tensors.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics::gpu {

namespace {

std::vector<float> normal_tensor(std::size_t n, std::mt19937_64& rng, float scale, common::Precision dtype) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> out(n);
  for (auto& x : out) x = round_to(dtype, scale * dist(rng));
  return out;
}

std::vector<float> to_float(std::vector<double> const& v) {
  return {v.begin(), v.end()};
}

}  // namespace

device::HostInputs make_normal_inputs(device::Problem const& problem, std::uint64_t seed, float q_spread) {
  std::mt19937_64 rng(seed);
  // FP8 kernels quantise bf16 inputs themselves (the storage precision).
  auto const stored = common::storage_precision(problem.dtype);
  device::HostInputs in;
  in.q = normal_tensor(problem.shape.q_elements(), rng, q_spread, stored);
  in.k = normal_tensor(problem.shape.kv_elements(), rng, 1.0f, stored);
  in.v = normal_tensor(problem.shape.kv_elements(), rng, 1.0f, stored);
  if (problem.direction == device::Direction::backward)
    in.d_o = normal_tensor(problem.shape.q_elements(), rng, 1.0f, stored);
  return in;
}

device::HostInputs family_inputs(device::Problem& problem, InputFamily family, std::uint64_t seed) {
  FamilyRequest request;
  request.shape = problem.shape;
  request.seed = seed;
  request.precision = problem.dtype;
  request.with_backward = problem.direction == device::Direction::backward;
  auto generated = generate_family(family, request);
  problem.shape = generated.inputs.shape;
  // Values are already rounded to the dtype, so the float copy is exact.
  return {to_float(generated.inputs.q), to_float(generated.inputs.k), to_float(generated.inputs.v),
          to_float(generated.inputs.d_o), nullptr};
}

bool family_applies(InputFamily family, bool causal) {
  return causal || family != InputFamily::fully_masked_rows;
}

device::HostOutputs reference_forward(device::Problem const& problem, device::HostInputs const& in) {
  auto inputs = to_attention_inputs(problem, in);
  inputs.d_o.clear();  // O and LSE only
  auto const ref = reference_attention(inputs);
  device::HostOutputs out;
  out.o.resize(ref.o.size());
  for (std::size_t i = 0; i < ref.o.size(); ++i) out.o[i] = round_to(problem.dtype, float(ref.o[i]));
  out.lse = to_float(ref.lse);
  return out;
}

}  // namespace fl::numerics::gpu
