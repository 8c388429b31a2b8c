// fa2_sm80_bwd: the FlashAttention-2 backward on mma.sync (kernels_src/fa2_sm80_bwd.cu), three launches:
// D = rowsum(dO * O) (and, with atomic dQ, the fp32 dQ accumulator zeroed); dK, dV per key block (looping
// over the query heads of a GQA group); then either dQ per query block in a separate pass (kDqAtomic = 0:
// deterministic, no atomics) or, with kDqAtomic = 1, dQ accumulated by fp32 REDs inside the dK/dV kernel
// and converted to the dtype by a small last launch (scratch: B * H_q * N_q * D floats). Tunables of the
// dK/dV kernel (kBlockM, kBlockN, kNWarps, kStages, kDqAtomic) and of the dQ pass (kQBlockM, kQBlockN, same
// kNWarps). Head dims 64 and 128: at 256 the dK + dV accumulators alone (256 floats per thread) exceed the
// register file of this design.
#include "device/arch_limits.hpp"
#include "device/families/families.hpp"
#include "device/families/name_expression.hpp"

#include <algorithm>

namespace fl::device::fa2_sm80_bwd {

namespace {
constexpr int kPreprocessWarps = 4;   // rows of D per preprocessing block (one warp per row)
constexpr int kConvertThreads = 128;  // fa_bwd_dq_convert's block
constexpr int kConvertPerThread = 8;  // dQ elements per convert thread (two 16-byte loads)
// Accumulator floats per thread of the dK/dV kernel, kMT * (kBlockM + D): dK + dV (kMT * D) plus S^T and
// dP^T (kMT * kBlockM), all live together while dS^T is formed. 192 admits FlashAttention-2's own sm80
// tiles (d64 128x128 and d128 64x128, 8 warps: 192 each); ptxas (2026-11-29, sm_90a) fits 160 without
// spills and spills some of the 192 configs, which the tuner then prunes after compiling.
constexpr int kMaxAccumulators = 192;
// The separate dQ pass: dQ (kMT * D / 2) + S and dP, as counted before the atomic variant existed.
constexpr int kMaxDqAccumulators = 160;

struct BwdConfig {
  int block_m, block_n, warps, stages, dq_atomic, q_block_m, q_block_n;
  explicit BwdConfig(Config const& c)
      : block_m(value_or(c, "kBlockM", 0)),
        block_n(value_or(c, "kBlockN", 0)),
        warps(value_or(c, "kNWarps", 0)),
        stages(value_or(c, "kStages", 1)),
        dq_atomic(value_or(c, "kDqAtomic", 0)),
        q_block_m(value_or(c, "kQBlockM", 0)),
        q_block_n(value_or(c, "kQBlockN", 0)) {}
};

// The dQ pass's tile values a config with kDqAtomic = 1 carries (it runs no dQ pass): the first of each
// axis, so that every dK/dV kernel appears once in the space.
constexpr int kUnusedQBlockM = 64;
constexpr int kUnusedQBlockN = 32;

std::vector<ParamSpec> parameters() {
  return {{"kBlockM", {32, 64, 128}, "dK/dV kernel: query rows per inner step"},
          {"kBlockN", {64, 128}, "dK/dV kernel: key rows per CTA"},
          {"kNWarps", {4, 8}, "warps per CTA (both kernels)"},
          {"kStages", {1, 2}, "dK/dV kernel: Q/dO buffers (2: next query block copied during this one)"},
          {"kDqAtomic", {0, 1}, "dQ: 0 separate deterministic pass, 1 fp32 atomics in the dK/dV kernel"},
          {"kQBlockM", {64, 128}, "dQ pass: query rows per CTA (kDqAtomic = 0)"},
          {"kQBlockN", {32, 64}, "dQ pass: keys per inner step (kDqAtomic = 0)"}};
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (problem.dtype != common::Precision::fp16 && problem.dtype != common::Precision::bf16)
    return "fa2_sm80_bwd runs fp16 and bf16";
  if (problem.shape.head_dim != 64 && problem.shape.head_dim != 128)
    return "fa2_sm80_bwd runs head dims 64 and 128";
  if (problem.direction != Direction::backward) return "fa2_sm80_bwd is the backward; use fa2_sm80 forward";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  return std::nullopt;
}

std::optional<std::string> violates(Config const& config, Problem const& problem) {
  BwdConfig const c(config);
  int const d = problem.shape.head_dim;
  if (c.warps != 4 && c.warps != 8) return "kNWarps is 4 or 8";
  if (c.stages != 1 && c.stages != 2) return "kStages is 1 or 2";
  if (c.dq_atomic != 0 && c.dq_atomic != 1) return "kDqAtomic is 0 or 1";
  if (c.dq_atomic == 1 && (c.q_block_m != kUnusedQBlockM || c.q_block_n != kUnusedQBlockN))
    return "kDqAtomic=1 runs no dQ pass: kQBlockM, kQBlockN stay at 64, 32";
  if (c.block_m <= 0 || c.block_m % 16 != 0) return "kBlockM must be a multiple of 16";
  if (c.block_n % (16 * c.warps) != 0 || c.block_n / c.warps / 16 > 2)
    return "dK/dV: 1-2 key tiles of 16 per warp";
  int const threads = kWarpSize * c.warps;
  if (c.block_m > threads) return "one thread per query row stages LSE and D";
  for (int rows : {c.block_m, c.block_n})
    if ((rows * d / 8) % threads != 0) return "tile copies must split evenly over the threads";
  if (c.dq_atomic == 0) {  // the dQ pass's kernel (fa2_sm80_bwd_dq), compiled only in this mode
    if (c.q_block_n <= 0 || c.q_block_n % 16 != 0) return "kQBlockN must be a multiple of 16";
    if (c.q_block_m % (16 * c.warps) != 0 || c.q_block_m / c.warps / 16 > 2)
      return "dQ: 1-2 query tiles of 16 per warp";
    if (c.q_block_m > threads) return "one thread per query row stages LSE and D";
    for (int rows : {c.q_block_m, c.q_block_n})
      if ((rows * d / 8) % threads != 0) return "tile copies must split evenly over the threads";
  }
  if (c.dq_atomic == 1) {
    // fa_bwd_blocks.cuh: the dS^T tile's rows are 32 queries or a multiple of 64 (swizzle), and DqSplit
    // gives each warp whole 16-row query tiles and an even number of 8-column head-dim tiles.
    if (c.block_m != 32 && c.block_m % 64 != 0) return "kDqAtomic=1: kBlockM is 32 or a multiple of 64";
    int const warps_m = std::min(c.warps, c.block_m / 16), warps_d = c.warps / warps_m;
    if (warps_m * warps_d != c.warps || (d / 8) % (2 * warps_d) != 0)
      return "kDqAtomic=1: the dQ tile does not split into whole tiles per warp";
  }
  int const kv_tiles = c.block_n / c.warps / 16, q_tiles = c.q_block_m / c.warps / 16;
  if (kv_tiles * (c.block_m + d) > kMaxAccumulators) return "dK/dV accumulators over the register budget";
  if (c.dq_atomic == 0 && 4 * q_tiles * (d / 8) + 2 * 4 * q_tiles * (c.q_block_n / 8) > kMaxDqAccumulators)
    return "dQ accumulators over the register budget";
  if (dkdv_shared_bytes(c.block_m, c.block_n, c.stages, c.dq_atomic, d) > kFamilyMaxSharedBytes ||
      (c.dq_atomic == 0 && dq_shared_bytes(c.q_block_m, c.q_block_n, d) > kFamilyMaxSharedBytes))
    return kFamilySharedRefusal;
  return std::nullopt;
}

Config default_config(Problem const& problem) {
  // fa-tune's headline grid on the H200 (2026-12-03, bf16, n 1024-16384, bayes: 12-14 of 24-50 configs a
  // problem; experiments/tuner/raw/2026-12-03-grid-184125Z). d128: dQ by atomics won at every n, 1.08-1.15x
  // the deterministic pass (which measured 179-184 TFLOP/s on 2026-11-29, when the atomic mode at tiles
  // picked from ptxas alone was slower): full with 128 keys, 8 warps and two stages (230.1 at n 16384),
  // causal at the deterministic tiles (220.0). d64 causal: 128 keys a block and a 64 x 32 dQ pass,
  // 1.04-1.05x (205.4). d64 full: the deterministic pass, which nothing beat at every n.
  Config c = deterministic_config(problem);
  bool const causal = problem.shape.causal;
  if (problem.shape.head_dim == 128) {
    c["kDqAtomic"] = 1;
    if (!causal) {
      c["kBlockN"] = 128;
      c["kNWarps"] = 8;
      c["kStages"] = 2;
    }
  } else if (causal) {
    c["kBlockM"] = 128;
    c["kQBlockN"] = 32;
  }
  return c;
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  BwdConfig const c(config);
  int const d = problem.shape.head_dim;
  bool const atomic = c.dq_atomic == 1;
  Config const dkdv{{"kHeadDim", d},
                    {"kBlockM", c.block_m},
                    {"kBlockN", c.block_n},
                    {"kNWarps", c.warps},
                    {"kStages", c.stages},
                    {"kDqAtomic", c.dq_atomic},
                    {"Is_causal", problem.shape.causal}};
  std::vector<std::string> names{
      name_expression(fa::signature::kBwdPreprocess, problem.dtype,
                      {{"kHeadDim", d}, {"kNWarps", kPreprocessWarps}, {"kClearDqAccum", atomic}}),
      name_expression(fa::signature::kFa2Sm80Dkdv, problem.dtype, dkdv)};
  if (atomic)
    names.push_back(name_expression(fa::signature::kBwdDqConvert, problem.dtype, {{"kHeadDim", d}}));
  else
    names.push_back(name_expression(fa::signature::kFa2Sm80Dq, problem.dtype,
                                    {{"kHeadDim", d},
                                     {"kBlockM", c.q_block_m},
                                     {"kBlockN", c.q_block_n},
                                     {"kNWarps", c.warps},
                                     {"Is_causal", problem.shape.causal}}));
  return names;
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
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
                  dkdv_shared_bytes(c.block_m, c.block_n, c.stages, c.dq_atomic, s.head_dim),
                  1};
  if (c.dq_atomic == 1) {
    LaunchStep convert{names[2],
                       {ceil_div(rows * s.head_dim / kConvertPerThread, kConvertThreads), 1, 1},
                       {unsigned(kConvertThreads), 1, 1},
                       0,
                       2};
    return {pre, dkdv, convert};
  }
  LaunchStep dq{names[2],
                {ceil_div(s.seqlen_q, c.q_block_m), unsigned(s.heads_q), unsigned(s.batch)},
                {threads, 1, 1},
                dq_shared_bytes(c.q_block_m, c.q_block_n, s.head_dim),
                2};
  return {pre, dkdv, dq};
}

ScratchBytes scratch(Config const& config, Problem const& problem) {
  ScratchBytes b;
  if (BwdConfig(config).dq_atomic == 1) {
    auto const& s = problem.shape;
    b.dq_accum = sizeof(float) * std::size_t(s.batch) * s.heads_q * s.seqlen_q * s.head_dim;
  }
  return b;
}

}  // namespace

Config deterministic_config(Problem const& problem) {
  // The separate dQ pass (kDqAtomic = 0), measured on the H200 on 2026-11-29 (d64 174/181 TFLOP/s at
  // n 2048/4096): 230/171 (d64) and 224-245 (d128) registers without spills.
  if (problem.shape.head_dim == 128)
    return {{"kBlockM", 32},  {"kBlockN", 64},  {"kNWarps", 4},  {"kStages", 1},
            {"kDqAtomic", 0}, {"kQBlockM", 64}, {"kQBlockN", 32}};
  return {{"kBlockM", 64},  {"kBlockN", 64},  {"kNWarps", 4},  {"kStages", 1},
          {"kDqAtomic", 0}, {"kQBlockM", 64}, {"kQBlockN", 64}};
}

std::size_t dkdv_shared_bytes(int block_m, int block_n, int stages, int dq_atomic, int d) {
  std::size_t const row = std::size_t(d) * 2;
  return 2 * block_n * row + 2 * std::size_t(stages) * block_m * row +
         (dq_atomic ? std::size_t(block_n) * block_m * 2 : 0) + 2 * std::size_t(stages) * block_m * 4;
}

std::size_t dq_shared_bytes(int q_block_m, int q_block_n, int d) {
  return dkdv_shared_bytes(q_block_m, q_block_n, 1, 0, d);
}

FamilyDescription const kDescription{
    .name = "fa2_sm80_bwd",
    .source_file = [](Problem const&) -> std::string { return "fa2_sm80_bwd.cu"; },
    FL_FAMILY_FUNCTIONS(fa2_sm80_bwd),
    .reproducible_config = deterministic_config,
    .scratch = scratch,
};

}  // namespace fl::device::fa2_sm80_bwd
