#include "tuner/problem.hpp"

#include <algorithm>
#include <cstdio>

namespace fl::tuner {

namespace {
constexpr double kForwardFlopsPerMac = 4.0;   // two GEMMs (QK^T and PV), 2 FLOPs per multiply-add each
constexpr double kBackwardOverForward = 2.5;  // five GEMMs against the forward's two
constexpr int kHeadlineWidth = 2048;          // h = 2048 / d keeps the model width fixed
}  // namespace

double Problem::flops() const {
  double f = kForwardFlopsPerMac * batch * heads_q * double(seqlen_q) * double(seqlen_k) * kind.head_dim;
  if (kind.causal) f /= 2.0;
  if (kind.pass == Pass::bwd) f *= kBackwardOverForward;
  return f;
}

std::string_view name(Pass pass) {
  return pass == Pass::fwd ? "fwd" : "bwd";
}

std::string describe(ProblemClass const& problem) {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%s d=%d %s %s", std::string(numerics::name(problem.dtype)).c_str(),
                problem.head_dim, problem.causal ? "causal" : "full",
                std::string(name(problem.pass)).c_str());
  return buffer;
}

std::string Problem::describe() const {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, " b=%d h=%d/%d n=%d/%d", batch, heads_q, heads_kv, seqlen_q, seqlen_k);
  return fl::tuner::describe(kind) + buffer;
}

Problem headline_problem(ProblemClass const& kind, int seqlen, std::int64_t tokens) {
  Problem p;
  p.kind = kind;
  p.batch = static_cast<int>(std::max<std::int64_t>(1, tokens / seqlen));
  p.heads_q = p.heads_kv = std::max(1, kHeadlineWidth / kind.head_dim);
  p.seqlen_q = p.seqlen_k = seqlen;
  return p;
}

}  // namespace fl::tuner
