#pragma once
// fa3_sm90_bwd: the FlashAttention-3 backward structure on Hopper (kernels_src/fa3_sm90_bwd.cu), three
// launches: D = rowsum(dO * O) with the fp32 dQ accumulator zeroed (fa_bwd_preprocess); the main kernel
// (TMA, wgmma, warp specialisation; one CTA per key block and key/value head, dK and dV of a GQA group
// summed in registers, dQ added to the accumulator by fp32 REDs, ordered per query block in the
// deterministic mode, or by TMA bulk reduce-add); dQ converted to the dtype (fa_bwd_dq_convert). Tunables,
// constraints and shared-memory arithmetic are kernels_src/fa3_sm90_bwd_config.h, which this file and the
// kernel both compile.
#include "tuner/family.hpp"

namespace fl::tuner {

class Fa3Sm90BwdFamily final : public Family {
 public:
  std::string_view name() const override { return "fa3_sm90_bwd"; }
  std::string source_file(Problem const&) const override { return "fa3_sm90_bwd.cu"; }
  std::vector<ParamSpec> parameters() const override;
  std::optional<std::string> unsupported(Problem const& problem) const override;
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override;
  Config default_config(Problem const& problem) const override;
  // The default with kDqMode = 1: dQ additions ordered per query block, the same bits every run.
  Config reproducible_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override;
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override;
  ScratchBytes scratch(Config const& config, Problem const& problem) const override;
  std::vector<runtime::TensorMapSpec> tensor_maps(Config const& config, Problem const& problem,
                                                  fa::AttentionParams const& params) const override;
};

}  // namespace fl::tuner
