#pragma once
// fa2_sm80: the FlashAttention-2 forward on mma.sync (kernels_src/fa2_sm80_fwd.cu). Its tunables and
// constraints mirror fa2::FwdConfig's static_asserts one for one.
#include "tuner/family.hpp"

namespace fl::tuner {

class Fa2Sm80Family final : public Family {
 public:
  std::string_view name() const override { return "fa2_sm80"; }
  std::string source_file(Problem const& problem) const override;
  std::vector<ParamSpec> parameters() const override;
  std::optional<std::string> unsupported(Problem const& problem) const override;
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override;
  Config default_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override;
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override;

  // Dynamic shared memory of the forward kernel for this config (Q tile + kStages K and V tiles, or the
  // FA-1 layout's merge buffer if larger).
  static std::size_t forward_shared_bytes(Config const& config, int head_dim);
};

}  // namespace fl::tuner
