// naive: standard attention in three launches through device memory (kernels_src/naive.cu). S and P
// need 2 * B * H_q * N_q * N_k floats of scratch: time_config refuses a problem that does not fit.
#include "device/arch_limits.hpp"
#include "device/families/families.hpp"
#include "device/families/name_expression.hpp"

namespace fl::device::naive {

namespace {

std::vector<ParamSpec> parameters() {
  return {{"kTile", {32, 64}, "square GEMM tile on tensor cores (kTile / 16 warps, 16 rows each)"},
          {"kSoftmaxThreads", {128, 256, 512}, "threads per softmax row"}};
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (problem.dtype != common::Precision::fp16 && problem.dtype != common::Precision::bf16)
    return "naive runs fp16 and bf16";
  if (problem.direction != Direction::forward) return "naive backward is not implemented yet";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  return std::nullopt;
}

std::optional<std::string> violates(Config const& config, Problem const&) {
  int const tile = value_or(config, "kTile", 0), threads = value_or(config, "kSoftmaxThreads", 0);
  if (tile != 32 && tile != 64) return "kTile is 32 or 64";
  if (threads < kWarpSize || threads % kWarpSize != 0 || threads > 1024)
    return "kSoftmaxThreads: whole warps, <= 1024";
  return std::nullopt;
}

Config default_config(Problem const&) {
  return {{"kTile", 64}, {"kSoftmaxThreads", 256}};
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  int const tile = value_or(config, "kTile", 64);
  return {name_expression(fa::signature::kNaiveScores, problem.dtype,
                          {{"kTile", tile}, {"Is_causal", problem.shape.causal}}),
          name_expression(fa::signature::kNaiveSoftmax, problem.dtype,
                          {{"kThreads", value_or(config, "kSoftmaxThreads", 256)}}),
          name_expression(fa::signature::kNaiveOutput, problem.dtype, {{"kTile", tile}})};
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
  auto const& s = problem.shape;
  auto const names = name_expressions(config, problem);
  unsigned const tile = unsigned(value_or(config, "kTile", 64));
  unsigned const threads = tile / 16 * kWarpSize;  // one warp per 16 rows of the tile
  auto const blocks = [tile](int n) { return unsigned((n + int(tile) - 1) / int(tile)); };
  unsigned const bh = unsigned(s.batch * s.heads_q);
  LaunchStep scores{names[0], {blocks(s.seqlen_q), blocks(s.seqlen_k), bh}, {threads, 1, 1}, 0, 0};
  LaunchStep softmax{names[1],
                     {unsigned(s.batch * s.heads_q * s.seqlen_q), 1, 1},
                     {unsigned(value_or(config, "kSoftmaxThreads", 256)), 1, 1},
                     0,
                     1};
  LaunchStep output{names[2], {blocks(s.seqlen_q), blocks(s.head_dim), bh}, {threads, 1, 1}, 0, 2};
  return {scores, softmax, output};
}

ScratchBytes scratch(Config const&, Problem const& problem) {
  auto const& s = problem.shape;
  std::size_t const matrix = sizeof(float) * std::size_t(s.batch) * s.heads_q * s.seqlen_q * s.seqlen_k;
  ScratchBytes b;
  b.s = matrix;
  b.p = matrix;
  return b;
}

}  // namespace

FamilyDescription const kDescription{
    .name = "naive",
    .source_file = [](Problem const&) -> std::string { return "naive.cu"; },
    FL_FAMILY_FUNCTIONS(naive),
    .scratch = scratch,
};

}  // namespace fl::device::naive
