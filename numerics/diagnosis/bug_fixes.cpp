#include "numerics/diagnosis/bug_fixes.hpp"

#include <array>
#include <utility>

namespace fl::numerics::diagnosis {

std::string_view fix_for_bug(std::string_view id) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kFixes{{
      {"unrescaled-o", "multiply the O accumulator by exp(m_old - m_new) whenever the running max rises"},
      {"unrescaled-l", "multiply the row sum l by exp(m_old - m_new) whenever the running max rises"},
      {"m-init-zero", "start the running max at -inf, not 0 (guard exp(-inf - -inf) separately)"},
      {"normalize-in-loop", "divide O by l once, in the epilogue, not after every key block"},
      {"stale-max", "compute a block's P = exp(s - m_new) with the max updated by that block"},
      {"missing-scale",
       "multiply the scores by softmax_scale = 1/sqrt(D) (or, if a scale of 1 is meant, check with --scale "
       "1)"},
      {"exp-base-mismatch", "scores scaled by log2(e) need exp2, not exp (or drop the log2(e) factor)"},
      {"causal-diagonal",
       "mask keys j > i + N_k - N_q (query i sees its own diagonal key, not the next one)"},
      {"masked-row-nan", "guard a row whose running max is -inf (use 0 in the exponent, as Check_inf does)"},
      {"tail-unmasked", "mask the keys past N_k in the last partial key block (zero padding scores 0)"},
      {"lse-without-max", "store LSE = m * scale + log(l): the running max belongs in it"},
      {"bwd-missing-delta", "dS = P * (dP - D) with D = rowsum(dO * O), computed before the main loop"},
      {"bwd-dk-missing-scale", "multiply dK by the softmax scale (dK = scale * dS^T Q)"},
      {"bwd-dq-overwrite",
       "accumulate dQ across key blocks (+=, or atomicAdd into dq_accum), do not overwrite"},
      {"bwd-p-without-l", "recompute P = exp(s * scale - LSE) with the stored LSE, not the row max alone"},
      {"fp8-missing-descale", "multiply the scores by the descale of Q and of K"},
      {"fp8-p-overflow", "quantise P with a scale that keeps the largest weight inside the FP8 range"},
  }};
  for (auto const& [bug, fix] : kFixes)
    if (bug == id) return fix;
  return {};
}

}  // namespace fl::numerics::diagnosis
