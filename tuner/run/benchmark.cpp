#include "tuner/run/benchmark.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "device/family_runner.hpp"
#include "device/run/device_problem.hpp"
#include "device/run/run_once.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_fp8_operands.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "runtime/device.hpp"

namespace fl::tuner {

namespace {

constexpr std::size_t kL2Multiple = 3;  // the rotated sets together span 3x the L2
constexpr int kMinSets = 2;
constexpr int kMaxSets = 16;
// Keep this share of device memory free for the driver, the module and other users of the GPU.
constexpr double kUsableMemoryShare = 0.9;
constexpr std::size_t kMiB = 1 << 20;

}  // namespace

runtime::Result<std::optional<device::Fp8Operands>> fp8_operands_of(device::Problem const& problem,
                                                                    device::HostInputs const& inputs) {
  try {
    return numerics::gpu::fp8_operands_for(problem, inputs);
  } catch (std::invalid_argument const& e) {
    return runtime::Error{"input", e.what(), ""};
  }
}

runtime::Result<numerics::gpu::Verdict> check_config(device::Family const& family,
                                                     device::Config const& config, device::Problem problem,
                                                     runtime::CompiledProgram const& program,
                                                     CheckOptions const& options,
                                                     device::HostInputs const* given) {
  device::HostInputs generated;
  if (!given && !numerics::gpu::family_applies(options.input_family, problem.shape.causal))
    return runtime::Error{"input",
                          "input family " + std::string(numerics::name(options.input_family)) +
                              " needs a causal kernel instance",
                          ""};
  if (!given) generated = numerics::gpu::family_inputs(problem, options.input_family, options.seed);
  device::HostInputs const& inputs = given ? *given : generated;
  // A backward kernel reads the forward's O and LSE: the float64 reference's, so it is judged alone.
  device::HostOutputs forward;
  if (problem.direction == device::Direction::backward)
    forward = numerics::gpu::reference_forward(problem, inputs);
  auto const fp8 = fp8_operands_of(problem, inputs);
  if (!fp8) return fp8.error();
  auto out = device::run_once(family, config, problem, program, inputs, &forward,
                              fp8->has_value() ? &**fp8 : nullptr);
  if (!out) return out.error();
  return numerics::gpu::judge_forward(numerics::gpu::recipe_of(family, config, problem), problem, inputs,
                                      out.value(), options.sample_rows, options.seed);
}

runtime::Result<TimedResult> time_config(
    device::Family const& family, device::Config const& config, device::Problem const& problem,
    runtime::CompiledProgram const& program, runtime::DeviceInfo const& device, TimingOptions const& options,
    device::HostInputs const& host_inputs,
    std::function<runtime::Status(device::DeviceProblem&)> const& prepare, device::HostOutputs const* forward,
    device::Fp8Operands const* fp8) {
  // A backward reads O and LSE: without them it would be timed on poisoned (NaN) inputs, whose special
  // values change nothing in the arithmetic's speed but make the run meaningless as a measurement.
  if (problem.direction == device::Direction::backward && !prepare && !forward)
    return runtime::Error{"input",
                          "timing a backward needs the forward's O and LSE (prepare or forward outputs)", ""};
  auto const scratch = family.scratch(config, problem);
  std::size_t const set_bytes = device::DeviceProblem::bytes_needed(problem, scratch);
  auto const usable = static_cast<std::size_t>(kUsableMemoryShare * double(device.memory_bytes));
  if (set_bytes > usable)
    return runtime::Error{"memory",
                          device::describe(problem) + " needs " + std::to_string(set_bytes / kMiB) +
                              " MiB of device memory; " + device.name + " has " +
                              std::to_string(usable / kMiB) + " MiB usable",
                          ""};
  int sets = int((kL2Multiple * device.l2_bytes + set_bytes - 1) / std::max<std::size_t>(set_bytes, 1));
  sets = std::clamp(sets, kMinSets, kMaxSets);
  sets = std::max(1, std::min<int>(sets, int(usable / set_bytes)));

  auto runner = device::FamilyRunner::load(family, config, problem, program);
  if (!runner) return runner.error();
  // FP8: quantised on the host once for every set (given, or here: 3.5 s of one core of this machine at
  // b4 h32 n4096 d64), or by the launch sequence itself (quantised on the device: timed with the forward).
  std::optional<device::Fp8Operands> quantised_here;
  if (!fp8) {
    auto operands = fp8_operands_of(problem, host_inputs);
    if (!operands) return operands.error();
    quantised_here = std::move(operands.value());
    if (quantised_here) fp8 = &*quantised_here;
  }
  std::vector<device::DeviceProblem> inputs;
  for (int i = 0; i < sets; ++i) {
    auto dp = device::DeviceProblem::create(problem, host_inputs, scratch, forward, fp8);
    if (!dp) return dp.error();
    if (prepare)
      if (auto st = prepare(dp.value()); !st) return st.error();
    inputs.push_back(std::move(dp.value()));
  }
  auto timed = time_runs([&](int i) { return runner->run(inputs[std::size_t(i % sets)].params); }, options);
  if (!timed) return timed.error();
  TimedResult result;
  result.stats = timed->stats;
  result.samples = std::move(timed->samples);
  result.tflops = device::attention_flops(problem) / (result.stats.median_ms * 1e-3) / 1e12;
  result.input_sets = sets;
  return result;
}

}  // namespace fl::tuner
