#include "tuner/run/host_tensors.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <random>

#include "common/parallel_for.hpp"

#include "numerics/input_families.hpp"
#include "numerics/precision.hpp"

namespace fl::tuner {

namespace {

// Each tensor is drawn in chunks of 2^16 elements, chunk c of tensor t from its own generator seeded by
// (seed, t, c): the values do not depend on the thread count, and the 134M normals of a headline backward
// (Q, K, V, dO at b n = 16384, h d = 2048) take ~0.3 s on the H200 machine's 16 cores instead of ~4 s on
// one, a third of every checked shape's host time in fa-bench.
constexpr std::size_t kChunkElements = std::size_t{1} << 16;

std::uint64_t chunk_seed(std::uint64_t seed, std::uint64_t tensor, std::uint64_t chunk) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(tensor), static_cast<std::uint32_t>(chunk),
                    static_cast<std::uint32_t>(chunk >> 32)};
  std::uint64_t out[1];
  seq.generate(reinterpret_cast<std::uint32_t*>(out), reinterpret_cast<std::uint32_t*>(out) + 2);
  return out[0];
}

std::vector<float> normal_tensor(std::size_t n, std::uint64_t seed, std::uint64_t tensor, float scale,
                                 common::Precision dtype) {
  std::vector<float> out(n);
  std::size_t const chunks = (n + kChunkElements - 1) / kChunkElements;
  common::parallel_for(chunks, 0, [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      std::mt19937_64 rng(chunk_seed(seed, tensor, c));
      std::normal_distribution<float> dist(0.0f, 1.0f);
      std::size_t const last = std::min(n, (c + 1) * kChunkElements);
      for (std::size_t i = c * kChunkElements; i < last; ++i) {
        // libstdc++'s polar method returns an exact 0 about once in 10^5 draws (a uniform of exactly 0.5):
        // drawn again, so that no input is zero.
        float x = dist(rng);
        while (x == 0.0f) x = dist(rng);
        out[i] = numerics::round_to(dtype, scale * x);
      }
    }
  });
  return out;
}

}  // namespace

HostInputs make_normal_inputs(device::Problem const& problem, std::uint64_t seed, float q_spread) {
  // FP8 kernels quantise bf16 inputs themselves (numerics' storage precision).
  auto const stored = numerics::storage_precision(problem.dtype);
  HostInputs in;
  in.q = normal_tensor(problem.shape.q_elements(), seed, 0, q_spread, stored);
  in.k = normal_tensor(problem.shape.kv_elements(), seed, 1, 1.0f, stored);
  in.v = normal_tensor(problem.shape.kv_elements(), seed, 2, 1.0f, stored);
  if (problem.direction == device::Direction::backward)
    in.d_o = normal_tensor(problem.shape.q_elements(), seed, 3, 1.0f, stored);
  return in;
}

std::vector<std::uint16_t> encode_16bit(std::vector<float> const& values, common::Precision dtype) {
  dtype = numerics::storage_precision(dtype);
  std::vector<std::uint16_t> out(values.size());
  int const threads = values.size() < kChunkElements ? 1 : 0;  // small tensors: no threads to start
  common::parallel_for(values.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if (dtype == common::Precision::bf16) {
        out[i] = static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(values[i])).x;
      } else {
        out[i] = static_cast<__half_raw>(__float2half_rn(values[i])).x;
      }
    }
  });
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
