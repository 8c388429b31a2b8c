#pragma once
// The verifier fa-mutate tests: the float64 reference, the tolerance model and the per-element judge of
// numerics/ (the same rule fa-check applies), prepared once per input set.
#include "numerics/campaign/mutation_campaign.hpp"

namespace fl::numerics::mutants {

JudgeFactory verifier_judge(int threads = 0);

}  // namespace fl::numerics::mutants
