#pragma once
// Seeded host inputs for our kernels (device/run/host_tensors.hpp): N(0, 1) timing inputs, numerics' input
// families, and the float64 reference's forward that a backward kernel is given.
#include <cstdint>

#include "device/problem.hpp"
#include "device/run/host_tensors.hpp"
#include "numerics/input_families.hpp"

namespace fl::numerics::gpu {

// Seeded inputs (with dO for a backward problem): N(0, 1) entries rounded to the dtype's storage precision
// (bf16 for an FP8 dtype: the values an FP8 kernel's operands are quantised from), Q scaled by `q_spread`
// so that the scores have a spread wide enough for the running max to move between key blocks. Never
// zeros (a zero input hides unwritten outputs and wrong indexing).
device::HostInputs make_normal_inputs(device::Problem const& problem, std::uint64_t seed,
                                      float q_spread = 2.0f);

// Seeded inputs of `family` for `problem` (forward only). Some families adjust the shape (fully masked
// rows, ragged tails): `problem` is updated to the shape the inputs have.
device::HostInputs family_inputs(device::Problem& problem, InputFamily family, std::uint64_t seed);

// Whether `family` can run on a kernel compiled for `causal`: fully_masked_rows makes the problem causal, so
// a non-causal kernel instance cannot be judged on it.
bool family_applies(InputFamily family, bool causal);

// O (rounded to the dtype, as a kernel writes it) and LSE of the float64 reference: the forward outputs
// a backward kernel reads, so that the backward is judged on its own. Every row: small problems only.
device::HostOutputs reference_forward(device::Problem const& problem, device::HostInputs const& in);

}  // namespace fl::numerics::gpu
