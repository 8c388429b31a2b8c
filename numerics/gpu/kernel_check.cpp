#include "numerics/gpu/kernel_check.hpp"

#include <cstdio>

#include "numerics/gpu/kernel_tensors.hpp"

namespace fl::numerics::gpu {

PrecisionRecipe recipe_of(device::Problem const& problem) {
  PrecisionRecipe recipe = recipe_for(problem.dtype);
  if (common::is_fp8(problem.dtype)) {
    recipe.fp8_scaling = problem.fp8.scaling;
    recipe.fp8_block_rows = problem.fp8.block_rows;
    recipe.incoherent = problem.fp8.incoherent;
    recipe.incoherent_seed = problem.fp8.incoherent_seed;
  }
  return recipe;
}

PrecisionRecipe recipe_of(device::Family const& family, device::Config const& config,
                          device::Problem const& problem) {
  PrecisionRecipe recipe = recipe_of(problem);
  recipe.scores = family.score_precision(config, problem);
  return recipe;
}

PrecisionRecipe operand_recipe_of(device::Problem const& problem) {
  PrecisionRecipe const recipe = recipe_of(problem);
  if (!common::is_fp8(problem.dtype) || !problem.fp8.bf16_pv) return recipe;
  return with_fp8_variants(recipe, Fp8Variants{}.with(Fp8Variant::bf16_pv));
}

CheckOptions check_options(device::Problem const& problem, std::size_t sample_rows, std::uint64_t seed) {
  return check_options(recipe_of(problem), problem, sample_rows, seed);
}

CheckOptions check_options(PrecisionRecipe const& recipe, device::Problem const& problem,
                           std::size_t sample_rows, std::uint64_t seed) {
  CheckOptions options;
  options.claimed = problem.dtype;
  // FP8: the bound allows any FP8 scaling; the recipe says which one the kernel used (reports, diagnosis).
  // 16-bit scores widen the bound (the tolerance model reads recipe.scores).
  if (common::is_fp8(problem.dtype) || recipe.scores != common::Precision::fp32) {
    options.recipe = recipe;
    options.use_custom_recipe = true;
  }
  options.sample_rows = sample_rows;
  options.sample_seed = seed;
  return options;
}

Verdict verdict_of(CheckResult const& result) {
  std::string text = result.pass ? "pass" : "FAIL";
  for (auto const& j : result.judgement.outputs) {
    if (!j.checked) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "; %s worst/bound %.2f, %zu failing, NaN %zu", j.name.c_str(),
                  j.worst_ratio, j.failing_elements, j.metrics.nan_count);
    text += buf;
  }
  text += "; " + std::to_string(result.checked_query_rows) + "/" + std::to_string(result.total_query_rows) +
          " rows";
  if (!result.pass && !result.worst_rows.empty())
    text += "; worst " + result.worst_rows.front().output + " row " +
            std::to_string(result.worst_rows.front().row) + " (" + result.worst_rows.front().properties + ")";
  return {result.pass, text};
}

Verdict judge_forward(device::Problem const& problem, device::HostInputs const& in,
                      device::HostOutputs const& out, std::size_t sample_rows, std::uint64_t seed) {
  return judge_forward(recipe_of(problem), problem, in, out, sample_rows, seed);
}

Verdict judge_forward(PrecisionRecipe const& recipe, device::Problem const& problem,
                      device::HostInputs const& in, device::HostOutputs const& out, std::size_t sample_rows,
                      std::uint64_t seed) {
  return verdict_of(run_check(to_attention_inputs(problem, in), to_attention_outputs(out),
                              check_options(recipe, problem, sample_rows, seed)));
}

}  // namespace fl::numerics::gpu
