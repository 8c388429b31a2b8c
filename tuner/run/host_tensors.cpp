#include "tuner/run/host_tensors.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <random>

#include "numerics/input_families.hpp"
#include "numerics/precision.hpp"

namespace fl::tuner {

namespace {

std::vector<float> normal_tensor(std::size_t n, std::mt19937_64& rng, float scale, common::Precision dtype) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> out(n);
  for (auto& x : out) x = numerics::round_to(dtype, scale * dist(rng));
  return out;
}

}  // namespace

HostInputs make_normal_inputs(device::Problem const& problem, std::uint64_t seed, float q_spread) {
  std::mt19937_64 rng(seed);
  // FP8 kernels quantise bf16 inputs themselves (numerics' storage precision).
  auto const stored = numerics::storage_precision(problem.dtype);
  HostInputs in;
  in.q = normal_tensor(problem.shape.q_elements(), rng, q_spread, stored);
  in.k = normal_tensor(problem.shape.kv_elements(), rng, 1.0f, stored);
  in.v = normal_tensor(problem.shape.kv_elements(), rng, 1.0f, stored);
  if (problem.direction == device::Direction::backward)
    in.d_o = normal_tensor(problem.shape.q_elements(), rng, 1.0f, stored);
  return in;
}

std::vector<std::uint16_t> encode_16bit(std::vector<float> const& values, common::Precision dtype) {
  dtype = numerics::storage_precision(dtype);
  std::vector<std::uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == common::Precision::bf16) {
      out[i] = static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(values[i])).x;
    } else {
      out[i] = static_cast<__half_raw>(__float2half_rn(values[i])).x;
    }
  }
  return out;
}

std::vector<float> decode_16bit(std::vector<std::uint16_t> const& bits, common::Precision dtype) {
  dtype = numerics::storage_precision(dtype);
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) {
    if (dtype == common::Precision::bf16) {
      __nv_bfloat16_raw raw;
      raw.x = bits[i];
      out[i] = __bfloat162float(__nv_bfloat16(raw));
    } else {
      __half_raw raw;
      raw.x = bits[i];
      out[i] = __half2float(__half(raw));
    }
  }
  return out;
}

EncodedInputs encode_inputs(HostInputs const& inputs, common::Precision dtype) {
  dtype = numerics::storage_precision(dtype);
  return EncodedInputs{dtype, encode_16bit(inputs.q, dtype), encode_16bit(inputs.k, dtype),
                       encode_16bit(inputs.v, dtype), encode_16bit(inputs.d_o, dtype)};
}

}  // namespace fl::tuner
