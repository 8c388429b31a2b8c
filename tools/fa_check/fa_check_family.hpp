#pragma once
// fa-check --family: judge one of our own kernel families instead of outputs from files. The family's
// config (its default, or --config) is compiled with NVRTC for this GPU (with -DFA_MUTANT_<ID> for
// --mutant), run once on seeded inputs of an input family, and its outputs go through the same check,
// summary and reports as .npy outputs do. A backward family (one that refuses the forward) is given the
// float64 reference's O and LSE and judged on dQ, dK, dV as well. Everything the user chose is judged
// before the GPU is looked for: a wrong command line is exit 2 on any machine, no GPU exit 3.
#include <boost/program_options.hpp>

#include <cstddef>
#include <optional>
#include <string>

#include "common/precision.hpp"

#include "numerics/check.hpp"
#include "numerics/check_problem.hpp"

namespace fl::tools::fa_check {

// The options of the --family mode, added to fa-check's own.
void add_family_options(boost::program_options::options_description& options);

// Whether the command line asks for the --family mode.
bool family_mode(boost::program_options::variables_map const& vm);

struct FamilyOutcome {
  int exit_code = 0;    // 0: `problem` and `options` are set; otherwise what fa-check exits with
  std::string message;  // the one line printed for a failure
  numerics::CheckProblem problem;
  numerics::CheckOptions options;  // the claimed precision and FP8 recipe of the kernel's dtype
  std::string description;  // "fa2_sm80 kBlockM=128,... on b1 h2/2 n256x256 d64 bf16 fwd, inputs normal"
};

// Judges the options (exit 2 with one line), then runs the kernel on the GPU (exit 3 without one; exit 1
// when NVRTC or the launch fails, with the log). `claimed` is --dtype, the kernel's element type;
// `softmax_scale` --scale (0: 1/sqrt(D)); `sample_rows` (0: numerics' default) goes into the options.
FamilyOutcome run_family(boost::program_options::variables_map const& vm, common::Precision claimed,
                         double softmax_scale, std::size_t sample_rows);

}  // namespace fl::tools::fa_check
