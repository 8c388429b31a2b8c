#include "numerics/gpu/kernel_inputs.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "common/parallel_for.hpp"

#include "numerics/gpu/kernel_tensors.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics::gpu {

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
  std::uint32_t words[2];
  seq.generate(words, words + 2);
  return (std::uint64_t{words[1]} << 32) | words[0];
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
        out[i] = round_to(dtype, scale * x);
      }
    }
  });
  return out;
}

std::vector<float> to_float(std::vector<double> const& v) {
  return {v.begin(), v.end()};
}

}  // namespace

device::HostInputs make_normal_inputs(device::Problem const& problem, std::uint64_t seed, float q_spread) {
  // FP8 kernels quantise bf16 inputs themselves (the storage precision).
  auto const stored = common::storage_precision(problem.dtype);
  device::HostInputs in;
  in.dtype = stored;
  in.q = normal_tensor(problem.shape.q_elements(), seed, 0, q_spread, stored);
  in.k = normal_tensor(problem.shape.kv_elements(), seed, 1, 1.0f, stored);
  in.v = normal_tensor(problem.shape.kv_elements(), seed, 2, 1.0f, stored);
  if (problem.direction == device::Direction::backward)
    in.d_o = normal_tensor(problem.shape.q_elements(), seed, 3, 1.0f, stored);
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
  return {to_float(generated.inputs.q),
          to_float(generated.inputs.k),
          to_float(generated.inputs.v),
          to_float(generated.inputs.d_o),
          nullptr,
          common::storage_precision(problem.dtype)};
}

bool family_applies(InputFamily family, bool causal) {
  return causal || family != InputFamily::fully_masked_rows;
}

namespace {

// The forward a backward kernel reads sums O plainly: it is only rounded to float and the dtype.
constexpr OutputSum kKernelInputOSum = OutputSum::plain;

// An element of O as the kernel's forward input holds it.
float kernel_o(common::Precision dtype, double o) {
  return round_to(dtype, float(o));
}

ForwardWithStatistics forward_of(device::Problem const& problem, AttentionInputs const& inputs,
                                 ReferenceOptions options = {}) {
  options.o_sum = kKernelInputOSum;
  ReferenceForward ref = reference_forward_rows(inputs, options);
  ForwardWithStatistics out;
  out.forward.o.resize(ref.o.size());
  common::parallel_for(ref.o.size(), common::elementwise_threads(ref.o.size(), options.threads),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t i = begin; i < end; ++i)
                           out.forward.o[i] = kernel_o(problem.dtype, ref.o[i]);
                       });
  out.forward.lse = to_float(ref.statistics.lse);
  out.statistics = std::make_shared<RowStatistics const>(std::move(ref.statistics));
  return out;
}

}  // namespace

device::HostOutputs reference_forward(device::Problem const& problem, device::HostInputs const& in) {
  auto inputs = to_attention_inputs(problem, in);
  inputs.d_o.clear();  // O and LSE only
  return forward_of(problem, inputs).forward;
}

bool is_reference_forward_on(device::Problem const& problem, AttentionInputs const& inputs,
                             std::vector<std::size_t> const& query_rows, device::HostOutputs const& forward) {
  RowSample rows;
  rows.query_rows = query_rows;
  ReferenceOptions options;
  options.o_sum = kKernelInputOSum;
  options.forward_only = true;  // dO, if the inputs carry it, plays no part in O and LSE
  SampledOutputs const ref = reference_sampled(inputs, std::move(rows), options);
  std::size_t const d = std::size_t(problem.shape.head_dim);
  for (std::size_t t = 0; t < ref.sample.query_rows.size(); ++t) {
    std::size_t const r = ref.sample.query_rows[t];
    if (forward.lse[r] != float(ref.lse[t])) return false;
    for (std::size_t e = 0; e < d; ++e)
      if (forward.o[r * d + e] != kernel_o(problem.dtype, ref.o[t * d + e])) return false;
  }
  return true;
}

ForwardWithStatistics reference_forward_with_statistics(device::Problem const& problem,
                                                        device::HostInputs const& in,
                                                        ReferenceOptions const& options) {
  if (in.d_o.empty())
    throw std::invalid_argument("reference_forward_with_statistics: the inputs carry no dO");
  return forward_of(problem, to_attention_inputs(problem, in), options);
}

}  // namespace fl::numerics::gpu
