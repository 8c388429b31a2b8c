#pragma once
// Turning fa-check's .npy files into one attention problem, with every way they can be wrong caught here
// (exit code 2 in fa-check): missing or unreadable file, wrong rank or shape, dtype outside
// float16/float32/float64, NaN or Inf in an input, head counts that are not a GQA group, an incomplete
// set of backward files. Shapes: Q, O, dO, dQ (B, H_q, N_q, D) or (N_q, D); K, V, dK, dV (B, H_kv, N_k,
// D) or (N_k, D); LSE (B, H_q, N_q) or (N_q) (a trailing 1 is accepted: (B, H_q, N_q, 1)).
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "numerics/attention_tensors.hpp"

namespace fl::numerics {

// A user's mistake: one line naming the bad value and what is allowed.
class CheckInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckFiles {
  std::filesystem::path q, k, v, o;
  std::optional<std::filesystem::path> lse, d_o, dq, dk, dv;
};

struct CheckProblem {
  AttentionInputs inputs;     // d_o set when the backward files were given
  AttentionOutputs observed;  // o always; lse, dq, dk, dv when given
  std::string input_dtype;    // dtype of the Q file, for the report
};

// causal and softmax_scale (0 = 1/sqrt(d)) go into the shape.
CheckProblem load_check_problem(CheckFiles const& files, bool causal, double softmax_scale);

// The same validation for tensors already in memory (NaN/Inf in the inputs, sizes against the shape).
void validate_problem(CheckProblem const& p);

}  // namespace fl::numerics
