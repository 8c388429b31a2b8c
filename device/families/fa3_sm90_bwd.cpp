// fa3_sm90_bwd: the FlashAttention-3 backward structure on Hopper (kernels_src/fa3_sm90_bwd.cu), three
// launches: D = rowsum(dO * O) with the fp32 dQ accumulator zeroed (fa_bwd_preprocess); the main kernel
// (TMA, wgmma, warp specialisation; one CTA per key block and key/value head, dK and dV of a GQA group
// summed in registers, dQ added to the accumulator by fp32 REDs, ordered per query block in the
// deterministic mode, or by TMA bulk reduce-add); dQ converted to the dtype (fa_bwd_dq_convert). Tunables,
// constraints and shared-memory arithmetic are kernels_src/fa3_sm90_bwd_config.h, which this file and the
// kernel both compile.
#include "device/families/families.hpp"

#include "device/families/tensor_maps.hpp"
#include "kernels_src/fa3_sm90_bwd_config.h"
#include "kernels_src/fa_tma_params.h"

namespace fl::device::fa3_sm90_bwd {

namespace {

constexpr unsigned kColumnsPerBox = 64;  // 16-bit columns in one 128-byte swizzle span: the maps' inner box
constexpr int kPreprocessWarps = 4;      // rows of D per preprocessing block (one warp per row)
constexpr int kConvertThreads = 128;     // fa_bwd_dq_convert's block
constexpr int kConvertPerThread = 8;     // dQ elements per convert thread

fa3::BwdTunables tunables_of(Config const& c, Problem const& problem) {
  return fa3::BwdTunables{problem.shape.head_dim,       2,
                          value_or(c, "kBlockM", 0),    value_or(c, "kBlockN", 0),
                          value_or(c, "kConsumers", 0), value_or(c, "kStages", 0),
                          value_or(c, "kDqMode", -1)};
}

unsigned ceil_div(long long a, long long b) {
  return unsigned((a + b - 1) / b);
}

std::vector<ParamSpec> parameters() {
  return {
      {"kBlockM", {64, 128}, "query rows per step (the N of S^T = K Q^T)"},
      {"kBlockN", {64, 128}, "keys per CTA: one 64-key group per consumer warpgroup (two share 64 at d256)"},
      {"kConsumers", {1, 2}, "consumer warpgroups (setmaxnreg 24/240 with two)"},
      {"kStages", {1, 2}, "Q/dO (+ LSE, D) shared-memory slots"},
      {"kDqMode",
       {0, 1, 2},
       "dQ into fp32: 0 REDs in any order, 1 REDs ordered per query block (deterministic), 2 TMA bulk "
       "reduce-add of each staged 64 x 64 item into a tiled accumulator"},
  };
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (problem.dtype != common::Precision::fp16 && problem.dtype != common::Precision::bf16)
    return "fa3_sm90_bwd runs fp16 and bf16 (got " + std::string(common::name(problem.dtype)) + ")";
  int const d = problem.shape.head_dim;
  if (d != 64 && d != 128 && d != 256)
    return "fa3_sm90_bwd runs head dims 64, 128, 256 (got " + std::to_string(d) + ")";
  if (problem.direction != Direction::backward) return "fa3_sm90_bwd is the backward; use fa3_sm90 forward";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  return std::nullopt;
}

std::optional<std::string> violates(Config const& config, Problem const& problem) {
  if (char const* why = fa3::bwd_violation(tunables_of(config, problem))) return std::string(why);
  return std::nullopt;
}

Config default_config(Problem const& problem) {
  // Picked from ptxas alone: two consumer warpgroups of 64 keys each where dK + dV fit beside S^T and dP^T
  // (d64: 128 queries per step; d128: 64, FlashAttention-3's 64 x 128 causal tile); at d256 the two share
  // 64 keys and split dK, dV's columns (FA3: 64 x 80). All compile without spills at 240 registers (CUDA
  // 13.0). dQ by one TMA bulk reduce-add per item at d128 (1.19x the REDs at n 2048 and 8192 full, H200,
  // 2026-12-01 session 4) and at d64 full (1.11-1.16x at n 1024-16384: fa-tune's exhaustive grid, H200,
  // 2026-12-03, experiments/tuner); by REDs at d64 causal (its 128-query steps with the staging spill 8
  // bytes) and d256 (two Q/dO stages leave no shared memory for the staging tiles). Timed against the peers
  // in experiments/fa3_sm90_bwd.
  int const d = problem.shape.head_dim;
  Config c{{"kBlockM", 64}, {"kBlockN", 128}, {"kConsumers", 2}, {"kStages", 2}, {"kDqMode", fa3::kDqAtomic}};
  if (d == 64) c["kBlockM"] = 128;
  if (d == 128 || (d == 64 && !problem.shape.causal)) c["kDqMode"] = fa3::kDqBulk;
  if (d == 256) c["kBlockN"] = 64;
  return c;
}

Config reproducible_config(Problem const& problem) {
  Config c = default_config(problem);
  c["kDqMode"] = fa3::kDqDeterministic;
  return c;
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  auto const i = [](int v) { return std::to_string(v); };
  auto const element = element_type_name(problem.dtype);
  // kDqBulk's accumulator is tiled (fa3::BwdDqTiles): the preprocess zeroes and the convert reads it so.
  std::string const layout = t.dq_mode == fa3::kDqBulk ? ", fa3::BwdDqTiles" : "";
  return {"fa_bwd_preprocess<" + element + ", " + i(t.head_dim) + ", " + i(kPreprocessWarps) + ", true" +
              layout + ">",
          "fa3_sm90_bwd<" + element + ", " + i(t.head_dim) + ", " + i(t.block_m) + ", " + i(t.block_n) +
              ", " + i(t.consumers) + ", " + i(t.stages) + ", " + i(t.dq_mode) + ", " +
              (problem.shape.causal ? "true" : "false") + ">",
          "fa_bwd_dq_convert<" + element + ", " + i(t.head_dim) + layout + ">"};
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  auto const& s = problem.shape;
  auto const names = name_expressions(config, problem);
  long long const rows = static_cast<long long>(s.batch) * s.heads_q * s.seqlen_q;
  LaunchStep pre{names[0], {ceil_div(rows, kPreprocessWarps), 1, 1}, {32u * kPreprocessWarps, 1, 1}, 0, 0};
  pre.takes_tensor_maps = false;
  LaunchStep main{names[1],
                  {ceil_div(s.seqlen_k, t.block_n), unsigned(s.heads_kv), unsigned(s.batch)},
                  {unsigned(fa3::bwd_threads(t)), 1, 1},
                  std::size_t(fa3::bwd_shared_bytes(t)),
                  1};
  LaunchStep convert{names[2],
                     {ceil_div(rows * s.head_dim / kConvertPerThread, kConvertThreads), 1, 1},
                     {unsigned(kConvertThreads), 1, 1},
                     0,
                     2};
  convert.takes_tensor_maps = false;
  return {pre, main, convert};
}

ScratchBytes scratch(Config const& config, Problem const& problem) {
  auto const& s = problem.shape;
  std::size_t const rows = std::size_t(s.batch) * s.heads_q * s.seqlen_q;
  ScratchBytes b;
  b.dq_accum = tunables_of(config, problem).dq_mode == fa3::kDqBulk
                   ? sizeof(float) * std::size_t(s.batch) * s.heads_q *
                         fa3::BwdDqTiles::head_floats(s.seqlen_q, s.head_dim)
                   : sizeof(float) * rows * s.head_dim;
  if (tunables_of(config, problem).dq_mode == fa3::kDqDeterministic) b.dq_semaphore = sizeof(int) * rows;
  return b;
}

std::vector<runtime::TensorMapSpec> tensor_maps(Config const& config, Problem const& problem,
                                                fa::AttentionParams const& params) {
  auto const t = tunables_of(config, problem);
  runtime::TensorElement const element = tensor_element(problem.dtype);
  static_assert(sizeof(fa::TmaBwdDescriptors) == 4 * runtime::kTensorMapBytes);
  // Q, K, V, dO in the order of fa::TmaBwdDescriptors; boxes of 64 16-bit columns (one 128-byte span).
  return {
      {attention_view(problem, element, params, AttentionTensor::q), unsigned(t.block_m), kColumnsPerBox},
      {attention_view(problem, element, params, AttentionTensor::k), unsigned(t.block_n), kColumnsPerBox},
      {attention_view(problem, element, params, AttentionTensor::v), unsigned(t.block_n), kColumnsPerBox},
      {attention_view(problem, element, params, AttentionTensor::d_o), unsigned(t.block_m), kColumnsPerBox}};
}

}  // namespace

FamilyDescription const kDescription{
    .name = "fa3_sm90_bwd",
    .source_file = [](Problem const&) -> std::string { return "fa3_sm90_bwd.cu"; },
    FL_FAMILY_FUNCTIONS(fa3_sm90_bwd),
    .reproducible_config = reproducible_config,
    .scratch = scratch,
    .tensor_maps = tensor_maps,
};

}  // namespace fl::device::fa3_sm90_bwd
