#include "tuner/families/fa2_sm80_bwd.hpp"

namespace fl::tuner {

namespace {
constexpr int kWarpSize = 32;
constexpr int kPreprocessWarps = 4;  // rows of D per preprocessing block (one warp per row)
constexpr std::size_t kMaxSharedBytes = 227 * 1024;
// Accumulator floats per thread; ptxas, 2026-11-29, sm_90a: dK/dV d128 kBlockM=32 (160) 245 registers
// without spills, kBlockM=64 (192) spills 20 bytes.
constexpr int kMaxAccumulators = 160;

struct BwdConfig {
  int block_m, block_n, warps, q_block_m, q_block_n;
  explicit BwdConfig(Config const& c)
      : block_m(value_or(c, "kBlockM", 0)),
        block_n(value_or(c, "kBlockN", 0)),
        warps(value_or(c, "kNWarps", 0)),
        q_block_m(value_or(c, "kQBlockM", 0)),
        q_block_n(value_or(c, "kQBlockN", 0)) {}
};

std::size_t shared_bytes(int block_m, int block_n, int d) {
  return std::size_t(2) * (block_m + block_n) * d * 2 + std::size_t(2) * block_m * 4;
}
}  // namespace

std::vector<ParamSpec> Fa2Sm80BwdFamily::parameters() const {
  return {{"kBlockM", {32, 64, 128}, "dK/dV kernel: query rows per inner step"},
          {"kBlockN", {64, 128}, "dK/dV kernel: key rows per CTA"},
          {"kNWarps", {4, 8}, "warps per CTA (both kernels)"},
          {"kQBlockM", {64, 128}, "dQ kernel: query rows per CTA"},
          {"kQBlockN", {32, 64}, "dQ kernel: keys per inner step"}};
}

std::optional<std::string> Fa2Sm80BwdFamily::unsupported(Problem const& problem) const {
  if (problem.dtype != numerics::Precision::fp16 && problem.dtype != numerics::Precision::bf16)
    return "fa2_sm80_bwd runs fp16 and bf16";
  if (problem.shape.head_dim != 64 && problem.shape.head_dim != 128)
    return "fa2_sm80_bwd runs head dims 64 and 128";
  if (problem.direction != Direction::backward) return "fa2_sm80_bwd is the backward; use fa2_sm80 forward";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  return std::nullopt;
}

std::optional<std::string> Fa2Sm80BwdFamily::violates(Config const& config, Problem const& problem) const {
  BwdConfig const c(config);
  int const d = problem.shape.head_dim;
  if (c.warps != 4 && c.warps != 8) return "kNWarps is 4 or 8";
  if (c.block_m <= 0 || c.block_m % 16 != 0 || c.q_block_n <= 0 || c.q_block_n % 16 != 0)
    return "kBlockM and kQBlockN must be multiples of 16";
  if (c.block_n % (16 * c.warps) != 0 || c.block_n / c.warps / 16 > 2)
    return "dK/dV: 1-2 key tiles of 16 per warp";
  if (c.q_block_m % (16 * c.warps) != 0 || c.q_block_m / c.warps / 16 > 2)
    return "dQ: 1-2 query tiles of 16 per warp";
  int const threads = kWarpSize * c.warps;
  for (int rows : {c.block_m, c.block_n, c.q_block_m, c.q_block_n})
    if ((rows * d / 8) % threads != 0) return "tile copies must split evenly over the threads";
  int const kv_tiles = c.block_n / c.warps / 16, q_tiles = c.q_block_m / c.warps / 16;
  if (2 * 4 * kv_tiles * (d / 8) + 2 * 4 * kv_tiles * (c.block_m / 8) > kMaxAccumulators)
    return "dK/dV accumulators over the register budget";
  if (4 * q_tiles * (d / 8) + 2 * 4 * q_tiles * (c.q_block_n / 8) > kMaxAccumulators)
    return "dQ accumulators over the register budget";
  if (shared_bytes(c.block_m, c.block_n, d) > kMaxSharedBytes ||
      shared_bytes(c.q_block_m, c.q_block_n, d) > kMaxSharedBytes)
    return "shared memory over 227 KiB";
  return std::nullopt;
}

Config Fa2Sm80BwdFamily::default_config(Problem const& problem) const {
  // No spills on sm_90a (ptxas, 2026-11-29): d64 dK/dV 230 and dQ 171 registers; d128 224-245. Not yet
  // timed on a GPU.
  if (problem.shape.head_dim == 128)
    return {{"kBlockM", 32}, {"kBlockN", 64}, {"kNWarps", 4}, {"kQBlockM", 64}, {"kQBlockN", 32}};
  return {{"kBlockM", 64}, {"kBlockN", 64}, {"kNWarps", 4}, {"kQBlockM", 64}, {"kQBlockN", 64}};
}

std::vector<std::string> Fa2Sm80BwdFamily::name_expressions(Config const& config,
                                                            Problem const& problem) const {
  BwdConfig const c(config);
  auto const head = element_type_name(problem.dtype) + ", " + std::to_string(problem.shape.head_dim) + ", ";
  auto const causal = problem.shape.causal ? std::string("true") : std::string("false");
  return {"fa2_sm80_bwd_preprocess<" + head + std::to_string(kPreprocessWarps) + ">",
          "fa2_sm80_bwd_dkdv<" + head + std::to_string(c.block_m) + ", " + std::to_string(c.block_n) + ", " +
              std::to_string(c.warps) + ", " + causal + ">",
          "fa2_sm80_bwd_dq<" + head + std::to_string(c.q_block_m) + ", " + std::to_string(c.q_block_n) +
              ", " + std::to_string(c.warps) + ", " + causal + ">"};
}

std::vector<LaunchStep> Fa2Sm80BwdFamily::launches(Config const& config, Problem const& problem) const {
  BwdConfig const c(config);
  auto const& s = problem.shape;
  auto const names = name_expressions(config, problem);
  auto const ceil_div = [](long long a, long long b) { return unsigned((a + b - 1) / b); };
  unsigned const threads = unsigned(kWarpSize * c.warps);
  long long const rows = static_cast<long long>(s.batch) * s.heads_q * s.seqlen_q;
  LaunchStep pre{names[0],
                 {ceil_div(rows, kPreprocessWarps), 1, 1},
                 {unsigned(kWarpSize * kPreprocessWarps), 1, 1},
                 0,
                 0};
  LaunchStep dkdv{names[1],
                  {ceil_div(s.seqlen_k, c.block_n), unsigned(s.heads_kv), unsigned(s.batch)},
                  {threads, 1, 1},
                  shared_bytes(c.block_m, c.block_n, s.head_dim),
                  1};
  LaunchStep dq{names[2],
                {ceil_div(s.seqlen_q, c.q_block_m), unsigned(s.heads_q), unsigned(s.batch)},
                {threads, 1, 1},
                shared_bytes(c.q_block_m, c.q_block_n, s.head_dim),
                2};
  return {pre, dkdv, dq};
}

}  // namespace fl::tuner
