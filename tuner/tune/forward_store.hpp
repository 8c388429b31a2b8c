#pragma once
// A backward problem's forward (the O and LSE its kernel reads) and every query row's float64 statistics
// (numerics::gpu::reference_forward_with_statistics), kept on disk between fa-tune processes: a restart
// after a sticky CUDA fault, the other backward family's line of the same grid call, a later call on the same
// machine read them (~0.3 s) instead of computing them again (the one O(B H N^2 D) step of verifying a
// backward: 5-25 s a problem at the headline shapes on the H200's host). Opt-in (fa-tune --forward-store
// DIR): at the headline shapes each problem takes ~75 MiB (O in its 16-bit encoding, LSE in float, the
// statistics in double).
//
// The file is named by a hash of what determines its content (the problem, the input seed, the input
// generator, this format) and holds its counts, so a file of another problem or a truncated one is never
// read. What it holds is never trusted blindly either: ReferenceCache checks it against the float64
// reference of every sampled query row (O and LSE to the bit, and the statistics: numerics' reference throws
// on any difference) and recomputes it on a mismatch, so a file written by an older reference is replaced,
// never used.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "device/problem.hpp"
#include "numerics/gpu/kernel_inputs.hpp"

namespace fl::tuner {

class ForwardStore {
 public:
  explicit ForwardStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // The forward of make_normal_inputs(problem, seed), if a complete file for it is there.
  std::optional<numerics::gpu::ForwardWithStatistics> load(device::Problem const& problem,
                                                           std::uint64_t seed) const;
  // Writes it (atomically: a reader never sees half a file). Best effort: returns why it could not (disk
  // full, a folder that cannot be made), and the caller goes on without the store.
  std::optional<std::string> save(device::Problem const& problem, std::uint64_t seed,
                                  numerics::gpu::ForwardWithStatistics const& forward) const;
  std::filesystem::path path_of(device::Problem const& problem, std::uint64_t seed) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace fl::tuner
