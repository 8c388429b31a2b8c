#pragma once
// Device memory of one attention problem: Q, K, V, O, LSE in the problem's dtype (fp32 LSE) plus the
// family's scratch, and the fa::AttentionParams that point at them (contiguous (B, H, N, D) strides).
// FP8 dtypes: Q, K, V as one-byte codes (device/run/fp8_operands.hpp, made by numerics) with their
// descale factors (per tensor in the params, per block in device arrays), O in bf16.
#include <optional>

#include "device/family.hpp"
#include "device/run/fp8_operands.hpp"
#include "device/run/host_tensors.hpp"
#include "kernels_src/fa_params.h"
#include "runtime/device_buffer.hpp"

namespace fl::device {

struct DeviceProblem {
  runtime::DeviceBuffer q, k, v, o, lse;
  std::optional<runtime::DeviceBuffer> scratch;  // one allocation, split per ScratchBytes field
  // Backward problems only: dO (input), dQ, dK, dV (outputs, poisoned), D = rowsum(dO * O) (fp32).
  std::optional<runtime::DeviceBuffer> d_o, dq, dk, dv, delta;
  fa::AttentionParams params{};
  // FP8 factors read from device arrays (descale_block_rows(problem) > 0): (B, H, ceil(N / block_rows)) each.
  std::optional<runtime::DeviceBuffer> q_descale, k_descale, v_descale;
  // FP8 quantised on the device (quantizes_on_device): the bf16 inputs the launches quantise, and the
  // incoherent transform's signs (D floats) when it is on.
  std::optional<runtime::DeviceBuffer> q_source, k_source, v_source, rotation_signs;

  // Device bytes this problem needs (inputs, outputs, scratch): what a size check compares with free memory.
  static std::size_t bytes_needed(Problem const& problem, ScratchBytes const& scratch);

  // Allocates, uploads `inputs` and poisons O and LSE (0xFF bytes: NaN) so that an unwritten element
  // shows. Fails (stage "memory") with a clear message when the device has too little free memory.
  // A backward problem also uploads inputs.d_o and, when given, the forward outputs it reads (`forward`: O
  // and LSE); without them O and LSE stay poisoned until a forward launch fills them.
  // FP8 dtypes need `fp8` (numerics::gpu::fp8_operands_for; fails, stage "input", without): its codes and
  // descales (quantised once by the caller for many input sets: time_config), or, quantised on the device,
  // the bf16 inputs are uploaded and the codes and descales are left to the launch sequence; its P scale
  // and signs either way.
  static runtime::Result<DeviceProblem> create(Problem const& problem, HostInputs const& inputs,
                                               ScratchBytes const& scratch,
                                               HostOutputs const* forward = nullptr,
                                               Fp8Operands const* fp8 = nullptr);

  // O and LSE; dQ, dK, dV as well for a backward problem.
  runtime::Result<HostOutputs> download(Problem const& problem) const;
};

}  // namespace fl::device
