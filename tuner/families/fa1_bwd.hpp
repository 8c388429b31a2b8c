#pragma once
// fa1_bwd: the FlashAttention-1 backward loop order (kernels_src/fa1_bwd.cu). Launches: D = rowsum(dO * O);
// one launch per key/value block j (the outer loop; params.step = j), whose CTAs (one per key/value head
// and batch) walk the query blocks and read-modify-write dQ (fp32, scratch B * H_q * N_q * D floats) in
// device memory; then fp32 dQ -> dtype. Correct, and slower than fa2_sm80_bwd by design: B * H_kv CTAs
// per launch and a dQ round trip per outer step.
#include "tuner/family.hpp"

namespace fl::tuner {

class Fa1BwdFamily final : public Family {
 public:
  std::string_view name() const override { return "fa1_bwd"; }
  std::string source_file(Problem const&) const override { return "fa1_bwd.cu"; }
  std::vector<ParamSpec> parameters() const override;
  std::optional<std::string> unsupported(Problem const& problem) const override;
  std::optional<std::string> violates(Config const& config, Problem const& problem) const override;
  Config default_config(Problem const& problem) const override;
  std::vector<std::string> name_expressions(Config const& config, Problem const& problem) const override;
  std::vector<LaunchStep> launches(Config const& config, Problem const& problem) const override;
  ScratchBytes scratch(Config const& config, Problem const& problem) const override;

  static std::size_t step_shared_bytes(int block_m, int block_n, int head_dim);
};

}  // namespace fl::tuner
