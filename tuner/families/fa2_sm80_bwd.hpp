#pragma once
// fa2_sm80_bwd: the FlashAttention-2 backward on mma.sync (kernels_src/fa2_sm80_bwd.cu), three launches:
// D = rowsum(dO * O); dK, dV per key block (looping over the query heads of a GQA group); dQ per query
// block in a separate pass (deterministic: no atomics). Tunables of the dK/dV kernel (kBlockM, kBlockN,
// kNWarps) and of the dQ kernel (kQBlockM, kQBlockN, same kNWarps). Head dims 64 and 128: at 256 the
// dK + dV accumulators alone (256 floats per thread) exceed the register file of this design.
#include "tuner/family.hpp"

namespace fl::tuner {

class Fa2Sm80BwdFamily final : public Family {
 public:
  std::string_view name() const override { return "fa2_sm80_bwd"; }
  std::string source_file(Problem const&) const override { return "fa2_sm80_bwd.cu"; }
  std::vector<ParamSpec> parameters() const override;
  std::optional<std::string> unsupported(Problem const& problem) const override;
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override;
  Config default_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override;
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override;
};

}  // namespace fl::tuner
