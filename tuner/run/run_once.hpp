#pragma once
// One run of a compiled family config on given host inputs: load the program, upload the inputs (outputs
// poisoned so that an unwritten element shows), launch every step, read the outputs back. A backward
// family also needs the forward's O and LSE (`forward`).
// Shared by check_config (verification before timing) and the GPU mutant runner (fa-mutate --target gpu).
#include "device/family.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/result.hpp"
#include "tuner/run/host_tensors.hpp"

namespace fl::tuner {

// Synchronous: the download waits for the launches, so a launch failure surfaces here. Needs a current
// context.
runtime::Result<HostOutputs> run_once(device::Family const& family, device::Config const& config,
                                      device::Problem const& problem, runtime::CompiledProgram const& program,
                                      HostInputs const& inputs, HostOutputs const* forward = nullptr);

}  // namespace fl::tuner
