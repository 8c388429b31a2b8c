#pragma once
// The bridge to numerics/ (issue 3): inputs from its seeded input families, and the verdict of its
// float64 reference and per-element tolerance model (numerics::run_check) on our kernels' outputs.
// This is the one check fa-bench, fa-tune and the [gpu] tests rely on.
#include <cstdint>
#include <string>

#include "device/problem.hpp"
#include "numerics/attention_tensors.hpp"
#include "numerics/check.hpp"
#include "numerics/input_families.hpp"
#include "numerics/precision_recipe.hpp"
#include "tuner/run/host_tensors.hpp"

namespace fl::tuner {

// What a kernel for `problem` rounds: numerics' recipe for the dtype, with the problem's FP8 scaling, block
// rows and incoherent rotation (the check's recipe: the tolerance model bounds FlashAttention-3's recipe,
// which bounds bf16_pv too, so fa-check judges either at FP8 tolerances).
numerics::PrecisionRecipe recipe_of(device::Problem const& problem);
// The same with the problem's FP8 variant (bf16_pv): what the operands an FP8 kernel is given are made
// with (tuner/run/fp8_operands), and what numerics' emulator replays.
numerics::PrecisionRecipe operand_recipe_of(device::Problem const& problem);

struct Verdict {
  bool pass = false;
  std::string summary;  // one line: pass/FAIL, worst element ratio to its bound per output, rows checked
};

// Seeded inputs of `family` for `problem` (forward only). Some families adjust the shape (fully masked
// rows, ragged tails): `problem` is updated to the shape the inputs have.
HostInputs family_inputs(device::Problem& problem, numerics::InputFamily family, std::uint64_t seed);

// Whether `family` can run on a kernel compiled for `causal`: fully_masked_rows makes the problem causal, so
// a non-causal kernel instance cannot be judged on it.
bool family_applies(numerics::InputFamily family, bool causal);

numerics::AttentionInputs to_numerics(device::Problem const& problem, HostInputs const& in);
numerics::AttentionOutputs to_numerics(HostOutputs const& out);

// O (rounded to the dtype, as a kernel writes it) and LSE of the float64 reference: the forward outputs
// a backward kernel reads, so that the backward is judged on its own. Every row: small problems only.
HostOutputs reference_forward(device::Problem const& problem, HostInputs const& in);

// The options of every check of our kernels: the problem's dtype as the claimed precision (FP8: the
// problem's scaling in the recipe), `sample_rows` (0: numerics' default), the sample seed.
numerics::CheckOptions check_options(device::Problem const& problem, std::size_t sample_rows,
                                     std::uint64_t seed);

// One line: pass/FAIL, worst element ratio to its bound per output, rows checked; the worst row on a failure.
Verdict verdict_of(numerics::CheckResult const& result);

// numerics::run_check with the problem's dtype as the claimed precision; judges dQ, dK, dV too when `out`
// carries them (and `in` carries dO). sample_rows = 0: numerics'
// default (every row of a small problem, a sample with every structurally dangerous row otherwise).
Verdict judge_forward(device::Problem const& problem, HostInputs const& in, HostOutputs const& out,
                      std::size_t sample_rows = 0, std::uint64_t seed = 1);

}  // namespace fl::tuner
