#pragma once
// fa2_sm80_bwd: the FlashAttention-2 backward on mma.sync (kernels_src/fa2_sm80_bwd.cu), three launches:
// D = rowsum(dO * O) (and, with atomic dQ, the fp32 dQ accumulator zeroed); dK, dV per key block (looping
// over the query heads of a GQA group); then either dQ per query block in a separate pass (kDqAtomic = 0:
// deterministic, no atomics) or, with kDqAtomic = 1, dQ accumulated by fp32 REDs inside the dK/dV kernel
// and converted to the dtype by a small last launch (scratch: B * H_q * N_q * D floats). Tunables of the
// dK/dV kernel (kBlockM, kBlockN, kNWarps, kStages, kDqAtomic) and of the dQ pass (kQBlockM, kQBlockN, same
// kNWarps). Head dims 64 and 128: at 256 the dK + dV accumulators alone (256 floats per thread) exceed the
// register file of this design.
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
  ScratchBytes scratch(Config const& config, Problem const& problem) const override;

  // The best config with the deterministic dQ pass (same bits run to run), for callers that need it.
  static Config deterministic_config(Problem const& problem);
  Config reproducible_config(Problem const& problem) const override { return deterministic_config(problem); }
  // Dynamic shared memory of the dK/dV kernel (fa2bwd::BwdConfig::kSmemBytes) and of the dQ pass.
  static std::size_t dkdv_shared_bytes(int block_m, int block_n, int stages, int dq_atomic, int head_dim);
  static std::size_t dq_shared_bytes(int q_block_m, int q_block_n, int head_dim);
};

}  // namespace fl::tuner
