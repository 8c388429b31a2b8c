#pragma once
// The verification inputs of a tuning run and their float64 reference, computed once per
// (problem shape, input family, seed, dtype, direction, sample size) and shared by every candidate (and by
// the default config and every noise run). Before this cache each candidate regenerated its inputs and
// recomputed the reference on the CPU (experiments/tuner/README.md, "Notes", has the measured cost before and
// after).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/input_families.hpp"
#include "tuner/tune/prepared_check.hpp"

namespace fl::tuner {

struct VerificationSet {
  PreparedCheck check;  // inputs, sample, reference, bounds
  device::HostOutputs
      forward;  // backward problems: the reference's O (rounded to the dtype) and LSE; else empty
};

// Large sets (the timed problem's inputs: ~400 MB of floats at the headline shapes) are kept for the
// kKeptLargeSets problems used last, so a run over 72 headline problems does not hold 29 GB; tuning visits a
// problem's candidates together, so each large set is still built once per problem and run.
class ReferenceCache {
 public:
  // encode_once: each set also keeps its inputs' 16-bit encodings (device::HostInputs::encoded), so a
  // candidate's uploads do not convert again (false: the 2026-11-29 protocol, for before/after runs: --pace
  // baseline).
  explicit ReferenceCache(bool encode_once = true) : encode_once_(encode_once) {}

  static constexpr std::size_t kKeptLargeSets = 2;
  static constexpr std::size_t kLargeSetBytes = std::size_t(64) << 20;

  // Inputs from numerics' input family (the small awkward verification problem).
  VerificationSet const& family_set(device::Problem const& problem, numerics::InputFamily family,
                                    std::uint64_t seed, std::size_t sample_rows);
  // numerics::gpu::make_normal_inputs(problem, seed) (the timed problem: the same values are timed).
  VerificationSet const& normal_set(device::Problem const& problem, std::uint64_t seed,
                                    std::size_t sample_rows);

  std::size_t size() const { return sets_.size(); }
  double seconds_spent() const { return seconds_; }  // building inputs and references, all sets

 private:
  VerificationSet const& insert(std::string key, device::Problem const& problem, device::HostInputs inputs,
                                std::uint64_t seed, std::size_t sample_rows);
  std::map<std::string, std::unique_ptr<VerificationSet>> sets_;
  std::vector<std::string> large_;  // keys of the large sets, oldest first
  double seconds_ = 0.0;
  bool encode_once_;
};

}  // namespace fl::tuner
