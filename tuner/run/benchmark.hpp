#pragma once
// Check-then-time for one compiled family config: the verification runs on the problem given (sampled
// rows for big n), the timing on device-resident input sets rotated so that a run never starts with its
// inputs in L2. TFLOP/s by the FlashAttention convention (device/problem.hpp).
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "device/family.hpp"
#include "device/run/device_problem.hpp"
#include "device/run/fp8_operands.hpp"
#include "device/run/host_tensors.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/input_families.hpp"
#include "runtime/device.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tuner/run/timing.hpp"

namespace fl::tuner {

// numerics' FP8 operands of an FP8 problem (numerics/gpu/kernel_fp8_operands.hpp), nullopt for a 16-bit
// one: what device::run_once and DeviceProblem::create take. Fails (stage "input") where numerics refuses
// them (sizes that do not match, a head dim the incoherent transform cannot rotate).
runtime::Result<std::optional<device::Fp8Operands>> fp8_operands_of(device::Problem const& problem,
                                                                    device::HostInputs const& inputs);

struct CheckOptions {
  std::size_t sample_rows = 0;  // 0: numerics' default (every row of a small problem)
  std::uint64_t seed = 1;
  numerics::InputFamily input_family = numerics::InputFamily::normal;
};

// Runs the config once on `given` inputs, or on seeded inputs of options.input_family (which may adjust
// the shape: fully masked rows, ragged tails), and judges O and LSE with numerics' reference and
// tolerance model, by the config's own recipe (numerics::gpu::recipe_of(family, config, problem): naive's
// kScoreBits = 16 by the bound of 16-bit scores).
runtime::Result<numerics::gpu::Verdict> check_config(device::Family const& family,
                                                     device::Config const& config, device::Problem problem,
                                                     runtime::CompiledProgram const& program,
                                                     CheckOptions const& options,
                                                     device::HostInputs const* given = nullptr);

struct TimedResult {
  TimingStats stats;
  double tflops = 0;  // at the median
  int input_sets = 0;
  std::vector<RunSample> samples;  // each timed run in order: its input set is launch % input_sets
};

// `prepare` runs once on every input set before timing (a backward fills O and LSE with a forward launch).
// `fp8`: an FP8 problem's operands of `inputs`, quantised before (fa-tune quantises once per problem);
// nullptr: quantised here.
// Times the config on `problem` with `inputs` uploaded to every rotated set (same values, different
// addresses: what the L2 sees). Refuses (stage "memory") a problem whose tensors and scratch do not fit
// in the device's memory, naming both sizes.
runtime::Result<TimedResult> time_config(
    device::Family const& family, device::Config const& config, device::Problem const& problem,
    runtime::CompiledProgram const& program, runtime::DeviceInfo const& device, TimingOptions const& options,
    device::HostInputs const& inputs,
    std::function<runtime::Status(device::DeviceProblem&)> const& prepare = {},
    device::HostOutputs const* forward = nullptr, device::Fp8Operands const* fp8 = nullptr);

}  // namespace fl::tuner
