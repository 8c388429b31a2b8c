#pragma once
// What an FP8 kernel is handed (device/run/fp8_operands.hpp), made with numerics' own pieces: Q, K, V (bf16
// values) optionally rotated by the incoherent transform (Q and K), quantised with numerics::quantize_fp8
// (per tensor or per block, Problem::fp8), stored as one-byte codes with the descale factors
// fa::AttentionParams carries (numerics' layout: per-block factors (B, H, ceil(N / block_rows))); with bf16
// P V (Problem::fp8.bf16_pv) V is bf16 instead, as numerics' quantize_operands makes it for the bf16_pv
// variant. Also the recipe's P scale and the transform's signs, which the device quantisation needs.
#include <optional>

#include "device/problem.hpp"
#include "device/run/fp8_operands.hpp"
#include "device/run/host_tensors.hpp"

namespace fl::numerics::gpu {

// Quantised on the host (also for a problem that quantises on the device: what its launches must match).
// Throws std::invalid_argument when the dtype is not FP8, the sizes do not match the shape, or the
// transform refuses the head dim.
device::Fp8Operands quantize_fp8_operands(device::Problem const& problem, device::HostInputs const& inputs);

// What device::run_once and DeviceProblem::create take: nullopt for a 16-bit problem; the P scale and the
// signs only for one that quantises on the device (device::quantizes_on_device); else
// quantize_fp8_operands. Throws as that does.
std::optional<device::Fp8Operands> fp8_operands_for(device::Problem const& problem,
                                                    device::HostInputs const& inputs);

}  // namespace fl::numerics::gpu
