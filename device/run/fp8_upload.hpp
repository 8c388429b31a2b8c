#pragma once
// The FP8 half of DeviceProblem::create: Q, K, V codes and their descale factors quantised on the host, or,
// quantised on the device, the bf16 inputs, the incoherent transform's signs and the (empty) descale arrays
// the fp8_quantize launches fill (device/families/fp8_quantize_launches.hpp); the P scale either way.
#include "device/problem.hpp"
#include "device/run/device_problem.hpp"
#include "device/run/fp8_operands.hpp"
#include "device/run/host_tensors.hpp"
#include "runtime/result.hpp"

namespace fl::device {

// Into dp's already allocated Q, K, V and dp.params. Fails (stage "input") when `operands` do not fit the
// problem (codes of other sizes, no signs for an incoherent problem quantised on the device).
runtime::Status upload_fp8(DeviceProblem& dp, Problem const& problem, HostInputs const& inputs,
                           Fp8Operands const& operands);

}  // namespace fl::device
