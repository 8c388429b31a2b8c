// fa1_bwd: the FlashAttention-1 backward loop order (kernels_src/fa1_bwd.cu). Launches: D = rowsum(dO * O);
// one launch per key/value block j (the outer loop; params.step = j), whose CTAs (one per key/value head
// and batch) walk the query blocks and read-modify-write dQ (fp32, scratch B * H_q * N_q * D floats) in
// device memory; then fp32 dQ -> dtype. Correct, and slower than fa2_sm80_bwd by design: B * H_kv CTAs
// per launch and a dQ round trip per outer step.
#include "device/arch_limits.hpp"
#include "device/families/families.hpp"
#include "device/families/name_expression.hpp"

#include <algorithm>

namespace fl::device::fa1_bwd {

namespace {
constexpr int kPreprocessWarps = 4;
constexpr int kConvertThreads = 128;
constexpr int kConvertPerThread = 8;
// kMT * (kBlockM + D) accumulator floats per thread (dK, dV, S^T, dP^T), as fa2_sm80_bwd counts them.
constexpr int kMaxAccumulators = 192;

std::vector<ParamSpec> parameters() {
  return {{"kBlockM", {32, 64, 128}, "query rows per inner step"},
          {"kBlockN", {64, 128}, "keys per launch (the outer loop's block)"},
          {"kNWarps", {4, 8}, "warps per CTA, each owning kBlockN / kNWarps key rows"}};
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (problem.dtype != common::Precision::fp16 && problem.dtype != common::Precision::bf16)
    return "fa1_bwd runs fp16 and bf16";
  if (problem.shape.head_dim != 64 && problem.shape.head_dim != 128)
    return "fa1_bwd runs head dims 64 and 128";
  if (problem.direction != Direction::backward) return "fa1_bwd is the backward; use fa1 forward";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  return std::nullopt;
}

std::optional<std::string> violates(Config const& config, Problem const& problem) {
  int const bm = value_or(config, "kBlockM", 0), bn = value_or(config, "kBlockN", 0),
            w = value_or(config, "kNWarps", 0);
  int const d = problem.shape.head_dim;
  if (w != 4 && w != 8) return "kNWarps is 4 or 8";
  if (bm <= 0 || bn <= 0) return "kBlockM and kBlockN must be set";
  if (bn % (16 * w) != 0 || bn / w / 16 > 2) return "each warp owns 1 or 2 whole 16-key tiles";
  int const threads = kWarpSize * w;
  if (bm % 32 != 0 || bm > threads) return "kBlockM: a multiple of 32, at most one row per thread";
  if (bm != 32 && bm % 64 != 0) return "kBlockM is 32 or a multiple of 64 (dS^T tile swizzle)";
  if ((bn * d / 8) % threads != 0 || (bm * d / 8) % threads != 0) return "tile copies must split evenly";
  int const warps_m = std::min(w, bm / 16), warps_d = w / warps_m;
  if ((d / 8) % (2 * warps_d) != 0) return "the dQ tile does not split into whole tiles per warp";
  if (bn / w / 16 * (bm + d) > kMaxAccumulators) return "accumulators over the register budget";
  if (step_shared_bytes(bm, bn, d) > kFamilyMaxSharedBytes) return kFamilySharedRefusal;
  return std::nullopt;
}

Config default_config(Problem const& problem) {
  // fa1_bwd is the loop-order baseline, not tuned: the largest tiles without spills.
  // ptxas, sm_90a, 2026-11-29: d64 64x64x4 247 registers, d128 32x128x8 254, no spills.
  if (problem.shape.head_dim == 128) return {{"kBlockM", 32}, {"kBlockN", 128}, {"kNWarps", 8}};
  return {{"kBlockM", 64}, {"kBlockN", 64}, {"kNWarps", 4}};  // 64x128x8 spills 16 bytes here
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  int const d = problem.shape.head_dim;
  Config const step{{"kHeadDim", d},
                    {"kBlockM", value_or(config, "kBlockM", 0)},
                    {"kBlockN", value_or(config, "kBlockN", 0)},
                    {"kNWarps", value_or(config, "kNWarps", 0)},
                    {"Is_causal", problem.shape.causal}};
  return {name_expression(fa::signature::kBwdPreprocess, problem.dtype,
                          {{"kHeadDim", d}, {"kNWarps", kPreprocessWarps}, {"kClearDqAccum", 0}}),
          name_expression(fa::signature::kFa1BwdStep, problem.dtype, step),
          name_expression(fa::signature::kBwdDqConvert, problem.dtype, {{"kHeadDim", d}})};
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
  auto const& s = problem.shape;
  auto const names = name_expressions(config, problem);
  int const bm = value_or(config, "kBlockM", 0), bn = value_or(config, "kBlockN", 0);
  auto const ceil_div = [](long long a, long long b) { return unsigned((a + b - 1) / b); };
  long long const rows = static_cast<long long>(s.batch) * s.heads_q * s.seqlen_q;
  std::vector<LaunchStep> steps;
  steps.push_back({names[0],
                   {ceil_div(rows, kPreprocessWarps), 1, 1},
                   {unsigned(kWarpSize * kPreprocessWarps), 1, 1},
                   0,
                   0});
  LaunchStep step{names[1],
                  {unsigned(s.heads_kv), unsigned(s.batch), 1},
                  {unsigned(kWarpSize * value_or(config, "kNWarps", 0)), 1, 1},
                  step_shared_bytes(bm, bn, s.head_dim),
                  0};
  int const outer = (s.seqlen_k + bn - 1) / bn;
  for (int j = 0; j < outer; ++j) {
    step.step = j;
    steps.push_back(step);
  }
  steps.push_back({names[2],
                   {ceil_div(rows * s.head_dim / kConvertPerThread, kConvertThreads), 1, 1},
                   {unsigned(kConvertThreads), 1, 1},
                   0,
                   0});
  return steps;
}

ScratchBytes scratch(Config const&, Problem const& problem) {
  auto const& s = problem.shape;
  ScratchBytes b;
  b.dq_accum = sizeof(float) * std::size_t(s.batch) * s.heads_q * s.seqlen_q * s.head_dim;
  return b;
}

}  // namespace

std::size_t step_shared_bytes(int block_m, int block_n, int d) {
  return std::size_t(2 * block_n + 2 * block_m) * d * 2 + std::size_t(block_n) * block_m * 2 +
         std::size_t(2) * block_m * 4;
}

FamilyDescription const kDescription{
    .name = "fa1_bwd",
    .source_file = [](Problem const&) -> std::string { return "fa1_bwd.cu"; },
    FL_FAMILY_FUNCTIONS(fa1_bwd),
    .scratch = scratch,
};

}  // namespace fl::device::fa1_bwd
