#pragma once
// fa1: the FlashAttention-1 loop order (kernels_src/fa1_fwd.cu): one launch per key/value block (the
// outer loop), the query blocks in the grid; O (fp32), m and l live in device scratch between launches.
#include "tuner/family.hpp"

namespace fl::tuner {

class Fa1Family final : public Family {
 public:
  std::string_view name() const override { return "fa1"; }
  std::string source_file(Problem const&) const override { return "fa1_fwd.cu"; }
  std::vector<ParamSpec> parameters() const override;
  std::optional<std::string> unsupported(Problem const& problem) const override;
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override;
  Config default_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override;
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override;
  ScratchBytes scratch(Config const& config, Problem const& problem) const override;
};

}  // namespace fl::tuner
