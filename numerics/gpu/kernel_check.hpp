#pragma once
// numerics' check of our kernels' outputs: the verdict of its float64 reference and per-element tolerance
// model (numerics::run_check) with the problem's dtype and FP8 options as the claimed precision. This is
// the one check fa-check --family, fa-mutate --target gpu, fa-bench, fa-tune and the [gpu] tests rely on.
#include <cstdint>
#include <string>

#include "device/family.hpp"
#include "device/problem.hpp"
#include "device/run/host_tensors.hpp"
#include "numerics/check.hpp"
#include "numerics/precision_recipe.hpp"

namespace fl::numerics::gpu {

// What a kernel for `problem` rounds: numerics' recipe for the dtype, with the problem's FP8 scaling, block
// rows and incoherent rotation (the check's recipe: the tolerance model bounds FlashAttention-3's recipe,
// which bounds bf16_pv too, so fa-check judges either at FP8 tolerances).
PrecisionRecipe recipe_of(device::Problem const& problem);
// What `family`'s `config` rounds for `problem`: recipe_of(problem) with the scores at the family's
// score_precision (naive's kScoreBits = 16: rounded to the input type, so the bound budgets that rounding).
PrecisionRecipe recipe_of(device::Family const& family, device::Config const& config,
                          device::Problem const& problem);
// The same with the problem's FP8 variant (bf16_pv): what the operands an FP8 kernel is given are made
// with (kernel_fp8_operands.hpp), and what numerics' emulator replays.
PrecisionRecipe operand_recipe_of(device::Problem const& problem);

struct Verdict {
  bool pass = false;
  std::string summary;  // one line: pass/FAIL, worst element ratio to its bound per output, rows checked
};

// The options of every check of our kernels: the problem's dtype as the claimed precision (FP8: the
// problem's scaling in the recipe), `sample_rows` (0: numerics' default), the sample seed.
CheckOptions check_options(device::Problem const& problem, std::size_t sample_rows, std::uint64_t seed);
// The same with a kernel's own recipe (recipe_of(family, config, problem)).
CheckOptions check_options(PrecisionRecipe const& recipe, device::Problem const& problem,
                           std::size_t sample_rows, std::uint64_t seed);

// One line: pass/FAIL, worst element ratio to its bound per output, rows checked; the worst row on a failure.
Verdict verdict_of(CheckResult const& result);

// numerics::run_check with the problem's dtype as the claimed precision; judges dQ, dK, dV too when `out`
// carries them (and `in` carries dO). sample_rows = 0: numerics'
// default (every row of a small problem, a sample with every structurally dangerous row otherwise).
Verdict judge_forward(device::Problem const& problem, device::HostInputs const& in,
                      device::HostOutputs const& out, std::size_t sample_rows = 0, std::uint64_t seed = 1);
// The same judged by a kernel's own recipe (recipe_of(family, config, problem): what check_config uses).
Verdict judge_forward(PrecisionRecipe const& recipe, device::Problem const& problem,
                      device::HostInputs const& in, device::HostOutputs const& out, std::size_t sample_rows,
                      std::uint64_t seed);

}  // namespace fl::numerics::gpu
