#include "tuner/run/numerics_check.hpp"

#include <cstdio>

#include "numerics/precision.hpp"
#include "numerics/reference.hpp"

namespace fl::tuner {

numerics::PrecisionRecipe recipe_of(device::Problem const& problem) {
  numerics::PrecisionRecipe recipe = numerics::recipe_for(problem.dtype);
  if (common::is_fp8(problem.dtype)) {
    recipe.fp8_scaling = problem.fp8.scaling;
    recipe.fp8_block_rows = problem.fp8.block_rows;
    recipe.incoherent = problem.fp8.incoherent;
    recipe.incoherent_seed = problem.fp8.incoherent_seed;
  }
  return recipe;
}

numerics::PrecisionRecipe operand_recipe_of(device::Problem const& problem) {
  numerics::PrecisionRecipe const recipe = recipe_of(problem);
  if (!common::is_fp8(problem.dtype) || !problem.fp8.bf16_pv) return recipe;
  return numerics::with_fp8_variants(recipe, numerics::Fp8Variants{}.with(numerics::Fp8Variant::bf16_pv));
}

namespace {
std::vector<float> to_float(std::vector<double> const& v) {
  return {v.begin(), v.end()};
}
std::vector<double> to_double(std::vector<float> const& v) {
  return {v.begin(), v.end()};
}
}  // namespace

HostInputs family_inputs(device::Problem& problem, numerics::InputFamily family, std::uint64_t seed) {
  numerics::FamilyRequest request;
  request.shape = problem.shape;
  request.seed = seed;
  request.precision = problem.dtype;
  request.with_backward = problem.direction == device::Direction::backward;
  auto generated = numerics::generate_family(family, request);
  problem.shape = generated.inputs.shape;
  // Values are already rounded to the dtype, so the float copy is exact.
  return {to_float(generated.inputs.q), to_float(generated.inputs.k), to_float(generated.inputs.v),
          to_float(generated.inputs.d_o), nullptr};
}

bool family_applies(numerics::InputFamily family, bool causal) {
  return causal || family != numerics::InputFamily::fully_masked_rows;
}

numerics::AttentionInputs to_numerics(device::Problem const& problem, HostInputs const& in) {
  numerics::AttentionInputs out;
  out.shape = problem.shape;
  out.q = to_double(in.q);
  out.k = to_double(in.k);
  out.v = to_double(in.v);
  out.d_o = to_double(in.d_o);
  return out;
}

numerics::AttentionOutputs to_numerics(HostOutputs const& out) {
  numerics::AttentionOutputs o;
  o.o = to_double(out.o);
  o.lse = to_double(out.lse);
  o.dq = to_double(out.dq);
  o.dk = to_double(out.dk);
  o.dv = to_double(out.dv);
  return o;
}

HostOutputs reference_forward(device::Problem const& problem, HostInputs const& in) {
  auto inputs = to_numerics(problem, in);
  inputs.d_o.clear();  // O and LSE only
  auto const ref = numerics::reference_attention(inputs);
  HostOutputs out;
  out.o.resize(ref.o.size());
  for (std::size_t i = 0; i < ref.o.size(); ++i)
    out.o[i] = numerics::round_to(problem.dtype, float(ref.o[i]));
  out.lse = to_float(ref.lse);
  return out;
}

numerics::CheckOptions check_options(device::Problem const& problem, std::size_t sample_rows,
                                     std::uint64_t seed) {
  numerics::CheckOptions options;
  options.claimed = problem.dtype;
  if (common::is_fp8(problem.dtype)) {
    // The bound allows any FP8 scaling; the recipe says which one the kernel used (reports, diagnosis).
    options.recipe = recipe_of(problem);
    options.use_custom_recipe = true;
  }
  options.sample_rows = sample_rows;
  options.sample_seed = seed;
  return options;
}

Verdict verdict_of(numerics::CheckResult const& result) {
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

Verdict judge_forward(device::Problem const& problem, HostInputs const& in, HostOutputs const& out,
                      std::size_t sample_rows, std::uint64_t seed) {
  return verdict_of(numerics::run_check(to_numerics(problem, in), to_numerics(out),
                                        check_options(problem, sample_rows, seed)));
}

}  // namespace fl::tuner
