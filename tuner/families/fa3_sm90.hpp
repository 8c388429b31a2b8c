#pragma once
// fa3_sm90: the FlashAttention-3 forward on Hopper (kernels_src/fa3_sm90_fwd.cu): TMA, wgmma, warp
// specialisation with setmaxnreg, ping-pong and intra-warpgroup overlap, persistent tiles. Its tunables,
// constraints and shared-memory arithmetic are kernels_src/fa3_sm90_config.h, which this file and the
// kernel both compile: nothing here restates a rule.
#include "tuner/family.hpp"

namespace fl::tuner {

class Fa3Sm90Family final : public Family {
 public:
  std::string_view name() const override { return "fa3_sm90"; }
  std::string source_file(Problem const& problem) const override;
  std::vector<ParamSpec> parameters() const override;
  std::optional<std::string> unsupported(Problem const& problem) const override;
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override;
  Config default_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override;
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override;
  ScratchBytes scratch(Config const& config, Problem const& problem) const override;
  std::pair<int, int> tile_rows_and_keys(Config const& config, Problem const& problem) const override;
  std::vector<runtime::TensorMapSpec> tensor_maps(Config const& config, Problem const& problem,
                                                  fa::AttentionParams const& params) const override;
};

}  // namespace fl::tuner
