#pragma once
// Check-then-time for one compiled family config: the verification runs on the problem given (sampled
// rows for big n), the timing on device-resident input sets rotated so that a run never starts with its
// inputs in L2. TFLOP/s by the FlashAttention convention (tuner/problem.hpp).
#include <cstdint>

#include "runtime/device.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tuner/family.hpp"
#include "tuner/run/forward_check.hpp"
#include "tuner/run/timing.hpp"

namespace fl::tuner {

struct CheckOptions {
  int rows_per_head = 0;  // 0: every row
  int heads = 0;          // 0: every (batch, head)
  std::uint64_t seed = 1;
};

// Runs the config once on `given` inputs (or, when null, seeded N(0,1) inputs) and judges O and LSE.
runtime::Result<ForwardCheck> check_config(Family const& family, Config const& config, Problem const& problem,
                                           runtime::CompiledProgram const& program,
                                           CheckOptions const& options, HostInputs const* given = nullptr);

struct TimedResult {
  TimingStats stats;
  double tflops = 0;  // at the median
  int input_sets = 0;
};

// Times the config on `problem` with `inputs` uploaded to every rotated set (same values, different
// addresses: what the L2 sees). Refuses (stage "memory") a problem whose tensors and scratch do not fit
// in the device's memory, naming both sizes.
runtime::Result<TimedResult> time_config(Family const& family, Config const& config, Problem const& problem,
                                         runtime::CompiledProgram const& program,
                                         runtime::DeviceInfo const& device, TimingOptions const& options,
                                         HostInputs const& inputs);

}  // namespace fl::tuner
