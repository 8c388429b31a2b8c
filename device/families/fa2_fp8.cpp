// fa2_fp8: the FlashAttention-2 forward with FP8 (e4m3, e5m2) Q, K, V on mma.sync m16n8k32
// (kernels_src/fa2_fp8_fwd.cu), bf16 O. Its tunables and constraints mirror fa2_fp8::FwdConfig's
// static_asserts one for one; the FP8 scaling mode (Problem::fp8) picks the kernel's kBlockDescale.
#include "device/arch_limits.hpp"
#include "device/families/families.hpp"
#include "device/families/fp8_quantize_launches.hpp"
#include "device/families/name_expression.hpp"

namespace fl::device::fa2_fp8 {

namespace {

// fp32 O + S (+ Q fragments) registers per thread; the kernel asserts the same limit (fa2_sm80's, measured).
constexpr int kMaxAccumulatorRegisters = 192;
constexpr int kMmaRows = 16;     // rows of one m16n8k32 tile
constexpr int kKeyStep = 32;     // keys of one P.V k-step (and bytes of one Q.K^T k-step)
constexpr int kChunkBytes = 16;  // one cp.async chunk
// Per-block descale: one V factor per P.V k-step, so the block must be whole k-steps.
constexpr int kDescaleBlockMultiple = kKeyStep;

struct Fp8Config {
  int block_m, block_n, warps, stages, q_in_regs;
  explicit Fp8Config(Config const& c)
      : block_m(value_or(c, "kBlockM", 0)),
        block_n(value_or(c, "kBlockN", 0)),
        warps(value_or(c, "kNWarps", 0)),
        stages(value_or(c, "kStages", 0)),
        q_in_regs(value_or(c, "kQInRegs", 0)) {}
};

bool per_block(Problem const& p) {
  return p.fp8.scaling == common::Fp8Scaling::per_block;
}

// Descale factors read from device arrays (the kernel's kBlockDescale): per-block scaling, or per-tensor
// quantised on the device.
bool block_descales(Problem const& p) {
  return descale_block_rows(p) > 0;
}

std::vector<ParamSpec> parameters() {
  return {
      {"kBlockM", {64, 128}, "query rows per CTA"},
      {"kBlockN", {32, 64, 128}, "keys per inner-loop block (whole 32-key P.V k-steps)"},
      {"kNWarps", {4, 8}, "warps per CTA (each owns kBlockM / kNWarps query rows)"},
      {"kStages", {1, 2, 3}, "K and V shared-memory buffers each (cp.async ring depth)"},
      {"kQInRegs", {0, 1}, "Q fragments kept in registers (1) or re-read from shared memory (0)"},
  };
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (!common::is_fp8(problem.dtype))
    return "fa2_fp8 runs fp8_e4m3 and fp8_e5m2 (got " + std::string(common::name(problem.dtype)) + ")";
  int const d = problem.shape.head_dim;
  if (d != 64 && d != 128 && d != 256)
    return "fa2_fp8 runs head dims 64, 128, 256 (got " + std::to_string(d) + ")";
  if (problem.direction != Direction::forward) return "fa2_fp8 is a forward family (no FP8 backward)";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  if (per_block(problem) &&
      (problem.fp8.block_rows <= 0 || problem.fp8.block_rows % kDescaleBlockMultiple != 0))
    return "fa2_fp8 per-block scaling needs a block of a positive multiple of 32 rows (got " +
           std::to_string(problem.fp8.block_rows) + ")";
  if (problem.fp8.bf16_pv) return "fa2_fp8 multiplies P V in FP8 only (bf16 P.V: fa3_sm90)";
  if (problem.fp8.pretransposed_v)
    return "fa2_fp8 reads row-major V (--fp8-v-layout rows); a pre-transposed V is fa3_sm90's V^T";
  return std::nullopt;
}

std::optional<std::string> violates(Config const& config, Problem const& problem) {
  Fp8Config const c(config);
  int const d = problem.shape.head_dim;
  if (c.warps != 1 && c.warps != 2 && c.warps != 4 && c.warps != 8) return "kNWarps must be 1, 2, 4 or 8";
  if (c.block_m <= 0 || c.block_n <= 0) return "kBlockM and kBlockN must be set";
  if (c.block_m % (kMmaRows * c.warps) != 0) return "kBlockM must be a multiple of 16 * kNWarps";
  if (c.block_n % kKeyStep != 0) return "kBlockN must be a multiple of 32";
  int const mt = c.block_m / c.warps / kMmaRows;
  if (mt > 4) return "at most 4 row tiles (64 rows) per warp";
  if (c.stages < 1 || c.stages > 4) return "kStages must be 1 to 4";
  int const threads = kWarpSize * c.warps, chunks = d / kChunkBytes;
  if ((c.block_n * chunks) % threads != 0 || (c.block_m * chunks) % threads != 0)
    return "tile copies must split evenly over the threads";
  if (c.q_in_regs != 0 && c.q_in_regs != 1) return "kQInRegs is 0 or 1";
  int const acc = 4 * mt * (d / 8 + c.block_n / 8) + (c.q_in_regs ? 4 * mt * d / kKeyStep : 0);
  if (acc > kMaxAccumulatorRegisters)
    return "accumulators need " + std::to_string(acc) + " registers per thread (limit " +
           std::to_string(kMaxAccumulatorRegisters) + ")";
  if (shared_bytes(config, d) > kFamilyMaxSharedBytes) return kFamilySharedRefusal;
  return std::nullopt;
}

Config default_config(Problem const& problem) {
  // Chosen on ptxas's sm_90a report (CUDA 13, 2026-11-29, after main's softmax overflow fix), not yet
  // timed: one 16-row tile per warp keeps O + S at 96-160 fp32 registers; the FP8 mma.sync, which sm_90
  // lowers to conversions + f16 HMMA, costs ~40-70 registers more than on sm_89. d64 128x128/8 warps and
  // d128 128x64/8 warps: 178-196 registers, no spills. d256 needs all 255: 64x32/4 warps spills a token
  // 16 bytes per tensor (none per block); 64x64 spills 32-160 bytes.
  int const d = problem.shape.head_dim;
  Config c{{"kBlockM", 128}, {"kBlockN", 64}, {"kNWarps", 8}, {"kStages", 1}, {"kQInRegs", 0}};
  if (d == 64) c["kBlockN"] = 128;
  if (d == 256) {
    // At ptxas's 255-register cap: spills vary from 4 to 340 bytes by instance (scaling, causal) and move
    // with unrelated code (the softmax's exact-exponent path added some); 64x32/4 warps with two stages
    // had the smallest worst case, 180 bytes (CUDA 13.0, sm_90a, 2026-11-29). Not timed on the H200.
    c["kBlockM"] = 64;
    c["kBlockN"] = 32;
    c["kNWarps"] = 4;
    c["kStages"] = 2;
  }
  return c;
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  Fp8Config const c(config);
  Config const values{{"kHeadDim", problem.shape.head_dim},
                      {"kBlockM", c.block_m},
                      {"kBlockN", c.block_n},
                      {"kNWarps", c.warps},
                      {"kStages", c.stages},
                      {"kQInRegs", c.q_in_regs != 0},
                      {"kBlockDescale", block_descales(problem)},
                      {"Is_causal", problem.shape.causal}};
  std::vector<std::string> names{name_expression(fa::signature::kFa2Fp8Fwd, problem.dtype, values)};
  for (auto const& name : fp8_quantize_name_expressions(problem)) names.push_back(name);  // launched first
  return names;
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
  Fp8Config const c(config);
  auto const& s = problem.shape;
  LaunchStep step;
  step.name_expression = name_expressions(config, problem).front();
  step.grid = {unsigned((s.seqlen_q + c.block_m - 1) / c.block_m), unsigned(s.heads_q), unsigned(s.batch)};
  step.block = {unsigned(kWarpSize * c.warps), 1, 1};
  step.dynamic_shared_bytes = shared_bytes(config, s.head_dim);
  auto steps = fp8_quantize_launches(problem);  // Q, K, V codes (none unless quantised on the device)
  steps.push_back(step);
  return steps;
}

ScratchBytes scratch(Config const&, Problem const& problem) {
  ScratchBytes bytes;
  bytes.fp8_amax = fp8_amax_scratch_bytes(problem);
  return bytes;
}

}  // namespace

std::size_t shared_bytes(Config const& config, int head_dim) {
  Fp8Config const c(config);
  return std::size_t(head_dim) * (std::size_t(c.block_m) + 2 * std::size_t(c.stages) * c.block_n);
}

FamilyDescription const kDescription{
    .name = "fa2_fp8",
    .source_file = [](Problem const& p) -> std::string { return fp8_program_file("fa2_fp8_fwd.cu", p); },
    FL_FAMILY_FUNCTIONS(fa2_fp8),
    .scratch = scratch,
};

}  // namespace fl::device::fa2_fp8
