// fa2_sm80: the FlashAttention-2 forward on mma.sync (kernels_src/fa2_sm80_fwd.cu). Its tunables and
// constraints mirror fa2::FwdConfig's static_asserts one for one.
#include "device/arch_limits.hpp"
#include "device/families/families.hpp"
#include "device/families/name_expression.hpp"

#include <algorithm>

namespace fl::device::fa2_sm80 {

namespace {

// Per-thread fp32 accumulator budget: O (kMT x kDT tiles) + S (kMT x kNT tiles) + Q fragments when held
// in registers, 4 values per tile. Above 192 the 255-register cap leaves too little for fragments and
// addresses: d128 kBlockM=128 kBlockN=64 4 warps (192) already spills 32 bytes; kBlockN=128 (256) spills
// hundreds (ptxas, 2026-11-29).
constexpr int kMaxAccumulatorRegisters = 192;
constexpr int kMmaRows = 16;    // rows of one m16n8k16 tile
constexpr int kMmaK = 16;       // keys of one P.V k-step
constexpr int kChunkElems = 8;  // 16-bit elements in one 16-byte cp.async chunk

struct Fa2Config {
  int block_m, block_n, warps, stages, warps_n, q_in_regs, epilogue_smem;
  explicit Fa2Config(Config const& c)
      : block_m(value_or(c, "kBlockM", 0)),
        block_n(value_or(c, "kBlockN", 0)),
        warps(value_or(c, "kNWarps", 0)),
        stages(value_or(c, "kStages", 0)),
        warps_n(value_or(c, "kWarpsN", 1)),
        q_in_regs(value_or(c, "kQInRegs", 0)),
        epilogue_smem(value_or(c, "kEpilogueSmem", 1)) {}
};

std::string source_file(Problem const& problem) {
  return problem.direction == Direction::forward ? "fa2_sm80_fwd.cu" : "fa2_sm80_bwd.cu";
}

std::vector<ParamSpec> parameters() {
  return {
      {"kBlockM", {64, 128}, "query rows per CTA"},
      {"kBlockN", {32, 64, 128}, "keys per inner-loop block"},
      {"kNWarps", {4, 8}, "warps per CTA"},
      {"kStages", {1, 2, 3}, "K and V shared-memory buffers each (cp.async ring depth)"},
      {"kWarpsN", {1, 2, 4}, "warps splitting each key block (1 = FlashAttention-2 rows, >1 = FA-1 columns)"},
      {"kQInRegs", {0, 1}, "Q fragments kept in registers (1) or re-read from shared memory (0)"},
      {"kEpilogueSmem",
       {0, 1},
       "O stored through shared memory with 16-byte stores (1) or from registers (0)"},
  };
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (problem.dtype != common::Precision::fp16 && problem.dtype != common::Precision::bf16)
    return "fa2_sm80 runs fp16 and bf16 (got " + std::string(common::name(problem.dtype)) + ")";
  int const d = problem.shape.head_dim;
  if (d != 64 && d != 128 && d != 256)
    return "fa2_sm80 runs head dims 64, 128, 256 (got " + std::to_string(d) + ")";
  if (problem.direction != Direction::forward) return "fa2_sm80 backward is not implemented yet";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  return std::nullopt;
}

std::optional<std::string> violates(Config const& config, Problem const& problem) {
  Fa2Config const c(config);
  int const d = problem.shape.head_dim;
  if (c.warps <= 0 || c.block_m <= 0 || c.block_n <= 0) return "kBlockM, kBlockN, kNWarps must be set";
  if (c.warps_n < 1 || c.warps % c.warps_n != 0) return "kWarpsN must divide kNWarps";
  int const warps_m = c.warps / c.warps_n;
  if (c.block_m % (kMmaRows * warps_m) != 0) return "kBlockM must be a multiple of 16 * (kNWarps / kWarpsN)";
  if (c.block_n % (kMmaK * c.warps_n) != 0) return "kBlockN must be a multiple of 16 * kWarpsN";
  int const mt = c.block_m / warps_m / kMmaRows;
  if (mt > 4) return "at most 4 row tiles (64 rows) per warp";
  if (c.stages < 1 || c.stages > 4) return "kStages must be 1 to 4";
  int const threads = kWarpSize * c.warps;
  if ((c.block_n * d / kChunkElems) % threads != 0 || (c.block_m * d / kChunkElems) % threads != 0)
    return "tile copies must split evenly over the threads";
  int const nt = c.block_n / c.warps_n / 8, dt = d / 8;
  int const acc = 4 * mt * (dt + nt) + (c.q_in_regs ? 4 * mt * d / 16 : 0);
  if (acc > kMaxAccumulatorRegisters)
    return "accumulators need " + std::to_string(acc) + " registers per thread (limit " +
           std::to_string(kMaxAccumulatorRegisters) + ")";
  if (forward_shared_bytes(config, d) > kFamilyMaxSharedBytes) return kFamilySharedRefusal;
  if (c.q_in_regs != 0 && c.q_in_regs != 1) return "kQInRegs is 0 or 1";
  if (c.epilogue_smem != 0 && c.epilogue_smem != 1) return "kEpilogueSmem is 0 or 1";
  return std::nullopt;
}

Config default_config(Problem const& problem) {
  // fa-tune's headline grid on the H200 (2026-12-03, bf16, n 1024-16384, bayes: 24-25 configs a problem;
  // experiments/tuner/raw/2026-12-03-grid-184125Z): the same tiles won at every n of each head dim and mask.
  // d64: 128 x 64 with Q kept in registers, 1.04-1.08x the earlier default (322.1 TFLOP/s full, 301.0
  // causal at n 16384). d128 full: 128 x 32 (318.2 at n 16384; the winners' other choices gave 1.00-1.03x,
  // within the noise); d128 causal: 64 x 64 with Q in registers, 1.03-1.05x (291.4). d256: 64 x 32, 4 warps,
  // one stage, 1.01-1.05x the earlier 128 x 64 with 8 warps and two stages (292.4 full, 254.9 causal).
  int const d = problem.shape.head_dim;
  Config c{{"kBlockM", 128}, {"kBlockN", 64}, {"kNWarps", 4},      {"kStages", 1},
           {"kWarpsN", 1},   {"kQInRegs", 1}, {"kEpilogueSmem", 1}};
  if (d == 128) {
    if (problem.shape.causal) {
      c["kBlockM"] = 64;
    } else {
      c["kBlockN"] = 32;
      c["kQInRegs"] = 0;
    }
  }
  if (d == 256) {
    c["kBlockM"] = 64;
    c["kBlockN"] = 32;
    c["kQInRegs"] = 0;
  }
  return c;
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  Fa2Config const c(config);
  Config const values{{"kHeadDim", problem.shape.head_dim},
                      {"kBlockM", c.block_m},
                      {"kBlockN", c.block_n},
                      {"kNWarps", c.warps},
                      {"kStages", c.stages},
                      {"kWarpsN", c.warps_n},
                      {"kQInRegs", c.q_in_regs},
                      {"kEpilogueSmem", c.epilogue_smem},
                      {"Is_causal", problem.shape.causal}};
  return {name_expression(fa::signature::kFa2Sm80Fwd, problem.dtype, values)};
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
  Fa2Config const c(config);
  auto const& s = problem.shape;
  LaunchStep step;
  step.name_expression = name_expressions(config, problem).front();
  step.grid = {unsigned((s.seqlen_q + c.block_m - 1) / c.block_m), unsigned(s.heads_q), unsigned(s.batch)};
  step.block = {unsigned(kWarpSize * c.warps), 1, 1};
  step.dynamic_shared_bytes = forward_shared_bytes(config, s.head_dim);
  return {step};
}

}  // namespace

std::size_t forward_shared_bytes(Config const& config, int head_dim) {
  Fa2Config const c(config);
  std::size_t const row_bytes = std::size_t(head_dim) * 2;
  std::size_t const q_bytes = std::size_t(c.block_m) * row_bytes;
  std::size_t const loop = q_bytes + 2 * std::size_t(c.stages) * c.block_n * row_bytes;
  std::size_t const merge =
      c.warps_n > 1 ? std::size_t(c.block_m) * head_dim * 4 + 2 * std::size_t(c.warps_n) * c.block_m * 4 : 0;
  return std::max(loop, q_bytes + merge);
}

FamilyDescription const kDescription{
    .name = "fa2_sm80",
    .source_file = source_file,
    FL_FAMILY_FUNCTIONS(fa2_sm80),
};

}  // namespace fl::device::fa2_sm80
