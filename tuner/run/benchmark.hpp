#pragma once
// Check-then-time for one compiled family config: the verification runs on the problem given (sampled
// rows for big n), the timing on device-resident input sets rotated so that a run never starts with its
// inputs in L2. TFLOP/s by the FlashAttention convention (device/problem.hpp).
#include <cstdint>
#include <functional>

#include "device/family.hpp"
#include "runtime/device.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tuner/run/device_problem.hpp"
#include "tuner/run/host_tensors.hpp"
#include "tuner/run/numerics_check.hpp"
#include "tuner/run/timing.hpp"

namespace fl::tuner {

struct CheckOptions {
  std::size_t sample_rows = 0;  // 0: numerics' default (every row of a small problem)
  std::uint64_t seed = 1;
  numerics::InputFamily input_family = numerics::InputFamily::normal;
};

// Runs the config once on `given` inputs, or on seeded inputs of options.input_family (which may adjust
// the shape: fully masked rows, ragged tails), and judges O and LSE with numerics' reference and
// tolerance model.
runtime::Result<Verdict> check_config(device::Family const& family, device::Config const& config,
                                      device::Problem problem, runtime::CompiledProgram const& program,
                                      CheckOptions const& options, HostInputs const* given = nullptr);

struct TimedResult {
  TimingStats stats;
  double tflops = 0;  // at the median
  int input_sets = 0;
};

// `prepare` runs once on every input set before timing (a backward fills O and LSE with a forward launch).
// Times the config on `problem` with `inputs` uploaded to every rotated set (same values, different
// addresses: what the L2 sees). Refuses (stage "memory") a problem whose tensors and scratch do not fit
// in the device's memory, naming both sizes.
runtime::Result<TimedResult> time_config(device::Family const& family, device::Config const& config,
                                         device::Problem const& problem,
                                         runtime::CompiledProgram const& program,
                                         runtime::DeviceInfo const& device, TimingOptions const& options,
                                         HostInputs const& inputs,
                                         std::function<runtime::Status(DeviceProblem&)> const& prepare = {},
                                         HostOutputs const* forward = nullptr);

}  // namespace fl::tuner
