#pragma once
// Problems as the tuner keys them. A ProblemClass is what a compiled kernel is specialised for (dtype,
// head dim, causal, direction); a Problem adds the sizes it is timed at.
#include <cstdint>
#include <string>
#include <vector>

#include "numerics/precision.hpp"

namespace fl::tuner {

enum class Pass { fwd, bwd };

struct ProblemClass {
  numerics::Precision dtype = numerics::Precision::bf16;
  int head_dim = 128;
  bool causal = false;
  Pass pass = Pass::fwd;
};

struct Problem {
  ProblemClass kind;
  int batch = 1;
  int heads_q = 1;
  int heads_kv = 1;
  int seqlen_q = 1;
  int seqlen_k = 1;

  // FLOPs by the FlashAttention papers' convention: forward 4·b·h·n_q·n_k·d, halved for causal;
  // backward 2.5 times the forward.
  double flops() const;
  std::string describe() const;  // "bf16 d=128 causal fwd b=4 h=16/16 n=4096/4096"
};

std::string describe(ProblemClass const& problem);
std::string_view name(Pass pass);

// The headline shapes of the FlashAttention papers: b = tokens / n, h = 2048 / d (tokens = 16384).
Problem headline_problem(ProblemClass const& kind, int seqlen, std::int64_t tokens = 16384);

}  // namespace fl::tuner
