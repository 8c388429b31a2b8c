// fa1: the FlashAttention-1 loop order (kernels_src/fa1_fwd.cu): one launch per key/value block (the
// outer loop), the query blocks in the grid; O (fp32), m and l live in device scratch between launches,
// in the registers' fragment order (kernels_src/fa_fragment_state.cuh), N_q rounded up to 16 per head;
// the tunables' rules, the padding and the shared memory are kernels_src/fa1_config.h's.
#include "device/arch_limits.hpp"
#include "device/families/families.hpp"
#include "device/families/name_expression.hpp"
#include "kernels_src/fa1_config.h"

namespace fl::device::fa1 {

namespace {

::fa1::Tunables tunables_of(Config const& config, Problem const& problem) {
  return {.head_dim = problem.shape.head_dim,
          .block_m = value_or(config, "kBlockM", 0),
          .block_n = value_or(config, "kBlockN", 0),
          .chunk_n = value_or(config, "kChunkN", 0),
          .warps = value_or(config, "kNWarps", 0)};
}

std::vector<ParamSpec> parameters() {
  return {{"kBlockM", {64, 128}, "query rows per CTA (the inner loop's block)"},
          {"kBlockN", {64, 128, 256}, "keys per launch (the outer loop's block, all in shared memory)"},
          {"kChunkN", {32, 64}, "keys per S = Q K^T tile in registers (kBlockN / kChunkN per launch)"},
          {"kNWarps", {4, 8}, "warps per CTA, each owning kBlockM / kNWarps rows"}};
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (problem.dtype != common::Precision::fp16 && problem.dtype != common::Precision::bf16)
    return "fa1 runs fp16 and bf16";
  int const d = problem.shape.head_dim;
  if (d != 64 && d != 128 && d != 256) return "fa1 runs head dims 64, 128, 256";
  if (problem.direction != Direction::forward) return "fa1 is the forward; the backward is family fa1_bwd";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  return std::nullopt;
}

// The rules are kernels_src/fa1_config.h's, which the kernel static_asserts too.
std::optional<std::string> violates(Config const& config, Problem const& problem) {
  if (char const* why = ::fa1::violation(tunables_of(config, problem))) return std::string(why);
  return std::nullopt;
}

Config default_config(Problem const& problem) {
  // Not yet timed (2026-12-02 rewrite; ptxas, sm_90a, CUDA 13.0): the largest key block (fewest O round
  // trips per FLOP) that leaves 2 CTAs per SM. d64 128 x 256 / 32-key chunks / 8 warps: 96-98 registers,
  // 80 KiB, 16 warps per SM (4 warps: ~160 registers, 8 warps per SM); d128 128 x 128 / 32 / 4: 243
  // registers, 96 KiB (8 warps: ~135 registers, one CTA); d256 64 x 64 / 32 / 4: 240 registers, 96 KiB.
  int const d = problem.shape.head_dim;
  if (d == 64) return {{"kBlockM", 128}, {"kBlockN", 256}, {"kChunkN", 32}, {"kNWarps", 8}};
  if (d == 128) return {{"kBlockM", 128}, {"kBlockN", 128}, {"kChunkN", 32}, {"kNWarps", 4}};
  return {{"kBlockM", 64}, {"kBlockN", 64}, {"kChunkN", 32}, {"kNWarps", 4}};
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  Config const values{
      {"kHeadDim", problem.shape.head_dim},        {"kBlockM", value_or(config, "kBlockM", 0)},
      {"kBlockN", value_or(config, "kBlockN", 0)}, {"kChunkN", value_or(config, "kChunkN", 0)},
      {"kNWarps", value_or(config, "kNWarps", 0)}, {"Is_causal", problem.shape.causal}};
  return {name_expression(fa::signature::kFa1FwdStep, problem.dtype, values)};
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
  auto const& s = problem.shape;
  int const bm = value_or(config, "kBlockM", 0), bn = value_or(config, "kBlockN", 0);
  LaunchStep step;
  step.name_expression = name_expressions(config, problem).front();
  step.grid = {unsigned((s.seqlen_q + bm - 1) / bm), unsigned(s.heads_q), unsigned(s.batch)};
  step.block = {unsigned(kWarpSize * value_or(config, "kNWarps", 0)), 1, 1};
  step.dynamic_shared_bytes = std::size_t(::fa1::shared_bytes(tunables_of(config, problem)));
  std::vector<LaunchStep> steps;
  int const outer = (s.seqlen_k + bn - 1) / bn;
  for (int j = 0; j < outer; ++j) {
    step.step = j;
    steps.push_back(step);
  }
  return steps;
}

ScratchBytes scratch(Config const&, Problem const& problem) {
  auto const& s = problem.shape;
  std::size_t const rows = std::size_t(s.batch) * s.heads_q * ::fa1::state_rows_per_head(s.seqlen_q);
  ScratchBytes b;
  b.m = sizeof(float) * rows;
  b.l = sizeof(float) * rows;
  b.o = sizeof(float) * rows * s.head_dim;
  return b;
}

}  // namespace

FamilyDescription const kDescription{
    .name = "fa1",
    .source_file = [](Problem const&) -> std::string { return "fa1_fwd.cu"; },
    FL_FAMILY_FUNCTIONS(fa1),
    .scratch = scratch,
};

}  // namespace fl::device::fa1
