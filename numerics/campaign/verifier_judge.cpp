#include "numerics/campaign/verifier_judge.hpp"

#include <memory>
#include <sstream>

#include "numerics/judge.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/reference.hpp"
#include "numerics/tolerance.hpp"

namespace fl::numerics::mutants {

namespace {

std::string describe_failure(fl::numerics::Judgement const& j) {
  std::ostringstream out;
  out.precision(3);
  bool first = true;
  for (auto const& o : j.outputs) {
    if (!o.checked || o.failing_elements == 0) continue;
    out << (first ? "" : "; ") << o.name << ": " << o.failing_elements << " elements over the bound (worst "
        << o.worst_ratio << "x)";
    first = false;
  }
  return out.str();
}

}  // namespace

JudgeFactory verifier_judge(int threads) {
  return [threads](AttentionInputs const& in, common::Precision claimed) -> PreparedJudge {
    RowSample sample = RowSample::all(in.shape, in.has_backward());
    ReferenceOptions reference_options;
    reference_options.threads = threads;
    ToleranceOptions tolerance_options;
    tolerance_options.inputs_exact = inputs_representable(in, claimed);
    tolerance_options.threads = threads;
    auto reference = std::make_shared<SampledOutputs const>(reference_sampled(in, sample, reference_options));
    auto bounds = std::make_shared<ElementBounds const>(
        tolerance_bounds(in, reference->sample, recipe_for(claimed), tolerance_options));
    common::AttentionShape const shape = in.shape;
    return [shape, reference, bounds](AttentionOutputs const& observed) {
      fl::numerics::Judgement const j = judge(shape, *reference, *bounds, observed);
      Verdict v;
      v.pass = j.pass;
      if (j.pass) return v;
      for (auto const& o : j.outputs) {
        if (!o.checked || o.failing_rows.empty()) continue;
        auto& target = (o.name == "O" || o.name == "LSE") ? v.failing.forward
                       : o.name == "dQ"                   ? v.failing.dq
                                                          : v.failing.key;
        target.insert(target.end(), o.failing_rows.begin(), o.failing_rows.end());
      }
      v.summary = describe_failure(j);
      return v;
    };
  };
}

}  // namespace fl::numerics::mutants
