#pragma once
// fa2_fp8: the FlashAttention-2 forward with FP8 (e4m3, e5m2) Q, K, V on mma.sync m16n8k32
// (kernels_src/fa2_fp8_fwd.cu), bf16 O. Its tunables and constraints mirror fa2_fp8::FwdConfig's
// static_asserts one for one; the FP8 scaling mode (Problem::fp8) picks the kernel's kBlockDescale.
#include "tuner/family.hpp"

namespace fl::tuner {

class Fa2Fp8Family final : public Family {
 public:
  std::string_view name() const override { return "fa2_fp8"; }
  std::string source_file(Problem const&) const override { return "fa2_fp8_fwd.cu"; }
  std::vector<ParamSpec> parameters() const override;
  std::optional<std::string> unsupported(Problem const& problem) const override;
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override;
  Config default_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override;
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override;

  // Dynamic shared memory: the Q tile and kStages K and V tiles, one byte per element.
  static std::size_t shared_bytes(Config const& config, int head_dim);
};

}  // namespace fl::tuner
