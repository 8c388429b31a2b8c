#include "tuner/tune/reference_cache.hpp"
#include "numerics/gpu/kernel_inputs.hpp"

#include <chrono>

namespace fl::tuner {

namespace {
std::string key_of(device::Problem const& problem, std::string const& inputs, std::uint64_t seed,
                   std::size_t sample_rows) {
  // describe() names the shape (b, h_q/h_kv, n_q x n_k, d), dtype, mask and direction.
  return device::describe(problem) + "|" + inputs + "|seed " + std::to_string(seed) + "|rows " +
         std::to_string(sample_rows);
}
}  // namespace

VerificationSet const& ReferenceCache::insert(std::string key, device::Problem const& problem,
                                              device::HostInputs inputs, std::uint64_t seed,
                                              std::size_t sample_rows) {
  auto const start = std::chrono::steady_clock::now();
  // A backward's forward and, from the same pass, every row's statistics, which its check's dK/dV need.
  numerics::gpu::ForwardWithStatistics forward;
  if (problem.direction == device::Direction::backward)
    forward = numerics::gpu::reference_forward_with_statistics(problem, inputs);
  if (encode_once_ && !common::is_fp8(problem.dtype))  // FP8 inputs are quantised, not encoded
    inputs.encoded =
        std::make_shared<device::EncodedInputs const>(device::encode_inputs(inputs, problem.dtype));
  auto set = std::make_unique<VerificationSet>(
      VerificationSet{PreparedCheck(problem, std::move(inputs), sample_rows, seed, forward.statistics),
                      std::move(forward.forward)});
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto const& in = set->check.inputs();
  std::size_t const bytes = sizeof(float) * (in.q.size() + in.k.size() + in.v.size() + in.d_o.size());
  if (bytes >= kLargeSetBytes) {
    large_.push_back(key);
    while (large_.size() > kKeptLargeSets) {  // never the set inserted now: callers hold references to it
      sets_.erase(large_.front());
      large_.erase(large_.begin());
    }
  }
  return *sets_.emplace(std::move(key), std::move(set)).first->second;
}

VerificationSet const& ReferenceCache::family_set(device::Problem const& problem,
                                                  numerics::InputFamily family, std::uint64_t seed,
                                                  std::size_t sample_rows) {
  auto key = key_of(problem, std::string(numerics::name(family)), seed, sample_rows);
  if (auto it = sets_.find(key); it != sets_.end()) return *it->second;
  auto const start = std::chrono::steady_clock::now();
  device::Problem shaped = problem;  // some families adjust the shape (fully masked rows, ragged tails)
  auto inputs = numerics::gpu::family_inputs(shaped, family, seed);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return insert(std::move(key), shaped, std::move(inputs), seed, sample_rows);
}

VerificationSet const& ReferenceCache::normal_set(device::Problem const& problem, std::uint64_t seed,
                                                  std::size_t sample_rows) {
  auto key = key_of(problem, "make_normal_inputs", seed, sample_rows);
  if (auto it = sets_.find(key); it != sets_.end()) return *it->second;
  auto const start = std::chrono::steady_clock::now();
  auto inputs = numerics::gpu::make_normal_inputs(problem, seed);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return insert(std::move(key), problem, std::move(inputs), seed, sample_rows);
}

}  // namespace fl::tuner
