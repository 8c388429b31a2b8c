#pragma once
// The check's cross-check against standard attention in the same precision (CheckOptions::
// cross_check_baseline): the baseline's outputs on the reference's rows, then how they fare against the
// reference and the bounds; PreparedCheck (check.cpp) computes both once per basis.
#include "numerics/check.hpp"

namespace fl::numerics {

// Standard attention in the same precision on the reference's rows: depends on the inputs only.
SampledOutputs baseline_outputs(AttentionInputs const& in, PrecisionRecipe const& recipe, bool sampled,
                                RowSample sample, int threads);

// The baseline's outputs against the reference and the bounds.
BaselineCrossCheck cross_check_baseline(SampledOutputs const& base, SampledOutputs const& reference,
                                        ElementBounds const& bounds);

}  // namespace fl::numerics
