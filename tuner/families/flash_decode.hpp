#pragma once
// flash_decode: the split-KV forward for decoding (kernels_src/flash_decode_fwd.cu, Flash-Decoding): a few
// query rows against a long KV cache, the keys split over kSplits CTAs and their warps, the partial
// (O, m, l) merged by a second kernel. Its tunables, constraints, shared-memory arithmetic and grid are
// kernels_src/flash_decode_config.h, which this file and the kernels both compile: nothing here restates a
// rule.
#include "tuner/family.hpp"

namespace fl::tuner {

class FlashDecodeFamily final : public Family {
 public:
  std::string_view name() const override { return "flash_decode"; }
  std::string source_file(Problem const&) const override { return "flash_decode_fwd.cu"; }
  std::vector<ParamSpec> parameters() const override;
  std::optional<std::string> unsupported(Problem const& problem) const override;
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override;
  Config default_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override;
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override;
  ScratchBytes scratch(Config const& config, Problem const& problem) const override;
};

}  // namespace fl::tuner
