#include "numerics/tolerance_sweep.hpp"

#include <algorithm>
#include <sstream>

#include "numerics/judge.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"
#include "numerics/seeded_random.hpp"
#include "numerics/tolerance.hpp"

namespace fl::numerics {

namespace {

constexpr int kFp8Variants = 4;        // {per-tensor, per-block} x {plain, incoherent}
constexpr int kSweepFp8BlockRows = 8;  // small blocks so that short sequences still have several

common::AttentionShape draw_shape(SeededRandom& rng, SweepOptions const& o) {
  common::AttentionShape s;
  s.batch = 1;
  s.heads_kv = rng.integer(1, 2);
  s.heads_q = s.heads_kv * rng.integer(1, 2);
  s.seqlen_q = rng.integer(1, o.max_seqlen);
  s.seqlen_k = rng.integer(1, o.max_seqlen);
  s.head_dim = o.head_dims[std::size_t(rng.integer(0, int(o.head_dims.size()) - 1))];
  s.causal = rng.bernoulli(0.5);
  return s;
}

PrecisionRecipe draw_recipe(common::Precision claimed, std::uint64_t seed, SweepOptions const& o) {
  if (claimed == common::Precision::fp8_e4m3 && seed % 2 == 1) claimed = common::Precision::fp8_e5m2;
  PrecisionRecipe r = recipe_for(claimed);
  if (!is_fp8(claimed)) return o.scores_in_input_type ? with_scores_in_input_type(r) : r;
  int const variant = int((seed / 2) % kFp8Variants);
  r.fp8_scaling = variant % 2 == 0 ? common::Fp8Scaling::per_tensor : common::Fp8Scaling::per_block;
  r.fp8_block_rows = kSweepFp8BlockRows;
  r.incoherent = variant >= 2;
  r.incoherent_seed = seed;
  return r;
}

std::string describe_case(InputFamily f, PrecisionRecipe const& r, std::uint64_t seed,
                          common::AttentionShape const& s, std::string const& output, double ratio) {
  std::ostringstream out;
  out << name(f) << " " << name(r.claimed);
  if (r.scores != common::Precision::fp32) out << " S in " << name(r.scores);
  if (is_fp8(r.claimed)) out << " " << name(r.fp8_scaling) << (r.incoherent ? " incoherent" : "");
  out << " seed " << seed << " b" << s.batch << " hq" << s.heads_q << " hkv" << s.heads_kv << " nq"
      << s.seqlen_q << " nk" << s.seqlen_k << " d" << s.head_dim << (s.causal ? " causal" : "") << ": "
      << output << " error/bound " << ratio;
  return out.str();
}

}  // namespace

SweepResult run_tolerance_sweep(Implementation const& implementation, SweepOptions const& options) {
  SweepResult result;
  std::vector<InputFamily> families = options.families;
  if (families.empty()) families.assign(all_input_families().begin(), all_input_families().end());
  ToleranceOptions tol;
  tol.threads = 1;
  if (options.kappa > 0.0) tol.kappa = options.kappa;
  for (std::uint64_t seed = options.first_seed; seed < options.first_seed + options.seeds; ++seed) {
    for (InputFamily family : families) {
      for (common::Precision claimed : options.precisions) {
        SeededRandom shape_rng(seed * 1000003ull + std::uint64_t(family));
        FamilyRequest request;
        request.shape = draw_shape(shape_rng, options);
        request.seed = seed;
        request.precision = claimed;
        request.with_backward = options.backward;
        FamilyInputs fi = generate_family(family, request);
        PrecisionRecipe const recipe = draw_recipe(claimed, seed, options);
        if (options.unrepresentable_inputs) {
          double const u = unit_roundoff(common::storage_precision(claimed));
          for (auto* t : {&fi.inputs.q, &fi.inputs.k, &fi.inputs.v, &fi.inputs.d_o})
            for (double& x : *t) {
              double const top = max_finite(common::storage_precision(claimed));
              x = std::clamp(x * (1.0 + u * (2.0 * shape_rng.uniform() - 1.0)), -top, top);
            }
          tol.inputs_exact = is_fp8(claimed) ? true : inputs_representable(fi.inputs, recipe.operands);
        }
        AttentionInputs const& in = fi.inputs;
        RowSample const all = RowSample::all(in.shape, in.has_backward());
        SampledOutputs const ref = reference_sampled(in, all, {1});
        ElementBounds const bounds = tolerance_bounds(in, ref.sample, recipe, tol);
        AttentionOutputs const observed = implementation(in, recipe);
        Judgement const j = judge(in.shape, ref, bounds, observed);
        ++result.runs;
        if (!j.pass) {
          ++result.failing_runs;
          if (result.first_failure.empty())
            for (auto const& o : j.outputs)
              if (o.failing_elements > 0) {
                result.first_failure = describe_case(family, recipe, seed, in.shape, o.name, o.worst_ratio);
                break;
              }
        }
        for (auto const& o : j.outputs) {
          if (!o.checked) continue;
          auto& g = result.by_group[std::string(name(family)) + " " + std::string(name(recipe.claimed)) +
                                    " " + o.name];
          g.first = std::max(g.first, o.worst_ratio);
          if (o.failing_elements > 0) ++g.second;
        }
        for (auto const& o : j.outputs)
          if (o.checked && o.worst_ratio > result.worst_ratio) {
            result.worst_ratio = o.worst_ratio;
            result.worst_case = describe_case(family, recipe, seed, in.shape, o.name, o.worst_ratio);
          }
      }
    }
  }
  return result;
}

}  // namespace fl::numerics
