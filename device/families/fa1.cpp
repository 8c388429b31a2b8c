// fa1: the FlashAttention-1 loop order (kernels_src/fa1_fwd.cu): one launch per key/value block (the
// outer loop), the query blocks in the grid; O (fp32), m and l live in device scratch between launches,
// in the registers' fragment order (kernels_src/fa_fragment_state.cuh), N_q rounded up to 16 per head.
#include "device/arch_limits.hpp"
#include "device/families/families.hpp"
#include "device/families/name_expression.hpp"

namespace fl::device::fa1 {

namespace {
// O + S tiles, 4 floats each. fa2_sm80 allows 192; here the O loads in flight at the start add to them:
// at 192 (d128, 2 row tiles per warp, 64-key chunks) ptxas spilled 12-364 bytes at 255 registers (CUDA
// 13.0); at <= 160 every config compiles without spills (tests/kernels_src/fa1_compile_test.cpp).
constexpr int kMaxAccumulatorRegisters = 160;
constexpr int kMaxChunksPerBlock = 8;  // bounds the kernel's chain of cp.async waits (2 groups a chunk)
constexpr int kStateRowTile = 16;      // state rows per head: N_q rounded up to this

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

std::optional<std::string> violates(Config const& config, Problem const& problem) {
  int const bm = value_or(config, "kBlockM", 0), bn = value_or(config, "kBlockN", 0),
            cn = value_or(config, "kChunkN", 0), w = value_or(config, "kNWarps", 0);
  int const d = problem.shape.head_dim;
  if (bm <= 0 || bn <= 0 || cn <= 0 || w <= 0) return "kBlockM, kBlockN, kChunkN, kNWarps must be set";
  if (bm % (16 * w) != 0 || bm / w / 16 > 4) return "each warp owns 1 to 4 whole 16-row tiles";
  if (cn % 16 != 0) return "kChunkN must be a multiple of 16";
  if (bn % cn != 0 || bn / cn > kMaxChunksPerBlock) return "kBlockN must be 1 to 8 whole kChunkN chunks";
  int const threads = kWarpSize * w;
  if ((cn * d / 8) % threads != 0 || (bm * d / 8) % threads != 0) return "tile copies must split evenly";
  int const mt = bm / w / 16;
  if (4 * mt * (d / 8 + cn / 8) > kMaxAccumulatorRegisters) return "accumulators over the register budget";
  if (std::size_t(bm + 2 * bn) * d * 2 > kFamilyMaxSharedBytes) return kFamilySharedRefusal;
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
  step.dynamic_shared_bytes = std::size_t(bm + 2 * bn) * s.head_dim * 2;
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
  std::size_t const rows_per_head = (s.seqlen_q + kStateRowTile - 1) / kStateRowTile * kStateRowTile;
  std::size_t const rows = std::size_t(s.batch) * s.heads_q * rows_per_head;
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
