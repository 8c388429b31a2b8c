#pragma once
// One run of a compiled family config on given host inputs: load the program, upload the inputs (outputs
// poisoned so that an unwritten element shows), launch every step, read the outputs back. A backward
// family also needs the forward's O and LSE (`forward`); an FP8 problem its FP8 operands (`fp8`, made by
// numerics::gpu::fp8_operands_for).
// Shared by check_config (verification before timing), fa-check --family and the GPU mutant runner
// (fa-mutate --target gpu).
#include "device/family.hpp"
#include "device/run/fp8_operands.hpp"
#include "device/run/host_tensors.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/result.hpp"

namespace fl::device {

// Synchronous: the download waits for the launches, so a launch failure surfaces here. Needs a current
// context.
runtime::Result<HostOutputs> run_once(Family const& family, Config const& config, Problem const& problem,
                                      runtime::CompiledProgram const& program, HostInputs const& inputs,
                                      HostOutputs const* forward = nullptr, Fp8Operands const* fp8 = nullptr);

}  // namespace fl::device
