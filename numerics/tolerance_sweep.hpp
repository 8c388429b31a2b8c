#pragma once
// The no-false-positive sweep: a correct implementation, run on every input family in every precision over
// many seeds (small random shapes: causal or not, GQA or not, odd n, n_q != n_k), must never exceed the
// tolerance bound. tests/numerics runs it with the untiled standard attention; the tiled emulator's tests
// run it with every loop order and block size. Also the place to calibrate kappa: it reports the
// largest error / bound ratio seen.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/input_families.hpp"
#include "numerics/precision_recipe.hpp"

namespace fl::numerics {

// Computes the full outputs (O, LSE and, when the inputs carry dO, dQ, dK, dV) in the recipe's precision.
using Implementation = std::function<AttentionOutputs(AttentionInputs const&, PrecisionRecipe const&)>;

struct SweepOptions {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 1000;
  std::vector<common::Precision> precisions = {common::Precision::fp16, common::Precision::bf16,
                                               common::Precision::fp8_e4m3};
  std::vector<InputFamily> families;  // empty: all
  int max_seqlen = 20;                // shapes are drawn per seed with n_q, n_k in [1, max_seqlen]
  std::vector<int> head_dims = {16};  // powers of two, so FP8 runs can use incoherent processing
  bool backward = true;
  double kappa = 0.0;  // 0: the tolerance model's default
  // Perturb every input by a relative u of the claimed precision so that it is no longer representable:
  // the kernel rounds it itself and the bound must include that rounding (fa-check on unrounded data).
  bool unrepresentable_inputs = false;
  // fp16/bf16 claims round every scaled score to the input type before the softmax
  // (with_scores_in_input_type: naive's kScoreBits = 16); FP8 claims keep fp32 scores.
  bool scores_in_input_type = false;
};

struct SweepResult {
  std::size_t runs = 0;
  std::size_t failing_runs = 0;
  double worst_ratio = 0.0;   // max |x - ref| / tau over every element of every run
  std::string worst_case;     // family, precision, recipe, seed, shape and output of the worst ratio
  std::string first_failure;  // same, for the first failing run
  // Worst ratio and failing-run count per "family precision output", for calibration.
  std::map<std::string, std::pair<double, std::size_t>> by_group;
};

// FP8 runs alternate e4m3/e5m2 (when fp8_e4m3 is listed) and cycle per-tensor / per-block scaling with and
// without incoherent processing, by seed.
SweepResult run_tolerance_sweep(Implementation const& implementation, SweepOptions const& options);

}  // namespace fl::numerics
