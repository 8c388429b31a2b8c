#pragma once
// diagnose's emulator search (diagnose.cpp; README.md, "The emulator search"): one pass that re-runs the
// tiled emulator on the inputs for the correct algorithm and every candidate mutant over the walks and the
// kBlockN, then kBlockM, candidates, and names the mutants that reproduce the observation far better than
// the correct algorithm. Internal to numerics/diagnosis.
#include "numerics/diagnosis/diagnose.hpp"

namespace fl::numerics::diagnosis {

// One pass: the forward outputs (O, LSE) on the failing rows and a sample of passing ones, or the gradients.
Diagnosis diagnose_pass(AttentionInputs const& in, AttentionOutputs const& observed,
                        PrecisionRecipe const& recipe, FailingRows const& failing,
                        DiagnosisOptions const& options, bool backward);

}  // namespace fl::numerics::diagnosis
