// fa1: the FlashAttention-1 loop order (kernels_src/fa1_fwd.cu): one launch per key/value block (the
// outer loop), the query blocks in the grid; O (fp32), m and l live in device scratch between launches.
#include "device/arch_limits.hpp"
#include "device/families/families.hpp"
#include "device/families/name_expression.hpp"

namespace fl::device::fa1 {

namespace {
constexpr int kMaxAccumulatorRegisters = 192;  // as fa2_sm80: O + S tiles, 4 floats each

std::vector<ParamSpec> parameters() {
  return {{"kBlockM", {64, 128}, "query rows per CTA (the inner loop's block)"},
          {"kBlockN", {32, 64, 128}, "keys per launch (the outer loop's block)"},
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
            w = value_or(config, "kNWarps", 0);
  int const d = problem.shape.head_dim;
  if (bm <= 0 || bn <= 0 || w <= 0) return "kBlockM, kBlockN, kNWarps must be set";
  if (bm % (16 * w) != 0 || bm / w / 16 > 4) return "each warp owns 1 to 4 whole 16-row tiles";
  if (bn % 16 != 0) return "kBlockN must be a multiple of 16";
  int const threads = kWarpSize * w;
  if ((bn * d / 8) % threads != 0 || (bm * d / 8) % threads != 0) return "tile copies must split evenly";
  int const mt = bm / w / 16;
  if (4 * mt * (d / 8 + bn / 8) > kMaxAccumulatorRegisters) return "accumulators over the register budget";
  if (std::size_t(bm + 2 * bn) * d * 2 > kFamilyMaxSharedBytes) return kFamilySharedRefusal;
  return std::nullopt;
}

Config default_config(Problem const& problem) {
  if (problem.shape.head_dim == 256) return {{"kBlockM", 128}, {"kBlockN", 64}, {"kNWarps", 8}};
  return {{"kBlockM", 128}, {"kBlockN", problem.shape.head_dim == 128 ? 32 : 64}, {"kNWarps", 4}};
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  Config const values{{"kHeadDim", problem.shape.head_dim},
                      {"kBlockM", value_or(config, "kBlockM", 0)},
                      {"kBlockN", value_or(config, "kBlockN", 0)},
                      {"kNWarps", value_or(config, "kNWarps", 0)},
                      {"Is_causal", problem.shape.causal}};
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
  std::size_t const rows = std::size_t(s.batch) * s.heads_q * s.seqlen_q;
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
