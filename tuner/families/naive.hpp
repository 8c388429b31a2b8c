#pragma once
// naive: standard attention in three launches through device memory (kernels_src/naive.cu). S and P
// need 2 * B * H_q * N_q * N_k floats of scratch: time_config refuses a problem that does not fit.
#include "tuner/family.hpp"

namespace fl::tuner {

class NaiveFamily final : public Family {
 public:
  std::string_view name() const override { return "naive"; }
  std::string source_file(Problem const&) const override { return "naive.cu"; }
  std::vector<ParamSpec> parameters() const override;
  std::optional<std::string> unsupported(Problem const& problem) const override;
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override;
  Config default_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override;
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override;
  ScratchBytes scratch(Config const& config, Problem const& problem) const override;
};

}  // namespace fl::tuner
