// naive: standard attention in three launches through device memory (kernels_src/naive.cu): S = Q K^T,
// P = softmax(S), O = P V, S and P (B, H_q, N_q, ld) with ld = n_k rounded up to 128. The rules, scratch
// layout and shared memory are kernels_src/naive_config.h's, which the kernels static_assert too.
// time_config refuses a problem whose S and P do not fit.
#include "device/arch_limits.hpp"
#include "device/families/families.hpp"
#include "device/families/name_expression.hpp"
#include "kernels_src/naive_config.h"

namespace fl::device::naive {

namespace {

std::vector<ParamSpec> parameters() {
  return {{"kNWarps", {4, 8}, "warps per CTA of both GEMMs (128 x 128 S tiles, 128 x D O tiles)"},
          {"kStages", {2, 3}, "cp.async ring depth of both GEMMs (K tiles; P and V slabs of 64 keys)"},
          // Not 512: the tuner's occupancy check pairs a program's largest block with its most registers
          // (a GEMM's 240-250 x 512 threads > the 64 K register file).
          {"kSoftmaxThreads", {128, 256}, "threads per softmax row"}};
}

// kScoreBits = 16 is a precision claim (S rounded to the input type, judged by the bound of 16-bit scores:
// score_precision), not a speed tunable: the tuner's check judges every candidate by fp32 scores, so it
// rejected every 16-bit candidate as wrong. --config kScoreBits=16 asks for it; fa-tune keeps 32.
std::vector<ParamSpec> precision_options() {
  return {{"kScoreBits", {32, 16}, "S in device memory: fp32, or the input type (PyTorch's math path)"}};
}

::naive::Tunables tunables_of(Config const& config, Problem const& problem) {
  return {problem.shape.head_dim, value_or(config, "kNWarps", 0), value_or(config, "kStages", 0),
          value_or(config, "kScoreBits", 0)};
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (problem.dtype != common::Precision::fp16 && problem.dtype != common::Precision::bf16)
    return "naive runs fp16 and bf16";
  if (problem.direction != Direction::forward) return "naive backward is not implemented yet";
  int const d = problem.shape.head_dim;
  if (d != 64 && d != 128 && d != 256) return "naive runs head dims 64, 128 and 256";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  return std::nullopt;
}

std::optional<std::string> violates(Config const& config, Problem const& problem) {
  if (char const* why = ::naive::violation(tunables_of(config, problem))) return std::string(why);
  int const threads = value_or(config, "kSoftmaxThreads", 0);
  if (threads < kWarpSize || threads % kWarpSize != 0 || threads > 1024)
    return "kSoftmaxThreads: whole warps, <= 1024";
  return std::nullopt;
}

// Not tuned on a GPU yet (2026-12-02): 8 warps (64 fp32 accumulators per thread in S = Q K^T, d / 2 in
// O = P V at d >= 128) and two stages (two CTAs per SM at d 128: 96 and 64 KiB). kScoreBits 32: S rounded
// to 16 bits moves a score s by up to |s| 2^-8 (bf16, round to nearest), and the weights by as much in
// relative terms (all_negative's scores near -120: up to 25%; fp16 overflows on near_dtype_max): accurate
// like the fused families by default. kScoreBits = 16 is PyTorch's math path (8 n^2 bytes per head
// instead of 12), `--config kScoreBits=16`, judged by the bound of 16-bit scores (score_precision below).
Config default_config(Problem const&) {
  return {{"kNWarps", 8}, {"kStages", 2}, {"kScoreBits", 32}, {"kSoftmaxThreads", 256}};
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  Config const gemm{{"kHeadDim", t.head_dim},
                    {"kNWarps", t.warps},
                    {"kStages", t.stages},
                    {"Is_causal", problem.shape.causal}};
  Config scores = gemm;
  scores["kScoreBits"] = t.score_bits;
  return {
      name_expression(fa::signature::kNaiveScores, problem.dtype, scores),
      name_expression(fa::signature::kNaiveSoftmax, problem.dtype,
                      {{"kThreads", value_or(config, "kSoftmaxThreads", 256)}, {"kScoreBits", t.score_bits}}),
      name_expression(fa::signature::kNaiveOutput, problem.dtype, gemm)};
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
  auto const& s = problem.shape;
  auto const t = tunables_of(config, problem);
  auto const names = name_expressions(config, problem);
  unsigned const threads = unsigned(t.warps * kWarpSize);
  runtime::Dim3 const tiles{unsigned((s.seqlen_q + ::naive::kBlockM - 1) / ::naive::kBlockM),
                            unsigned(s.heads_q), unsigned(s.batch)};
  LaunchStep scores{names[0], tiles, {threads, 1, 1}, std::size_t(::naive::scores_shared_bytes(t)), 0};
  LaunchStep softmax{names[1],
                     {unsigned(s.batch * s.heads_q * s.seqlen_q), 1, 1},
                     {unsigned(value_or(config, "kSoftmaxThreads", 256)), 1, 1},
                     std::size_t(::naive::softmax_shared_bytes(s.seqlen_k, t.score_bits)),
                     1};
  LaunchStep output{names[2], tiles, {threads, 1, 1}, std::size_t(::naive::output_shared_bytes(t)), 2};
  return {scores, softmax, output};
}

// Exactly what the kernels address: n_q rows of ld elements per (batch, head), S in kScoreBits, P in the
// input type (it holds values of the input type; the P V product reads it as such).
ScratchBytes scratch(Config const& config, Problem const& problem) {
  auto const& s = problem.shape;
  std::size_t const elements =
      std::size_t(s.batch) * s.heads_q * s.seqlen_q * std::size_t(::naive::scratch_row_stride(s.seqlen_k));
  ScratchBytes b;
  b.s = elements * std::size_t(::naive::score_bytes(value_or(config, "kScoreBits", 32)));
  b.p = elements * std::size_t(::naive::kElementBytes);
  return b;
}

// kScoreBits = 16 stores S * scale rounded to the input type (naive_scores' store_scores), and the softmax
// reads those values; 32 keeps fp32.
common::Precision score_precision(Config const& config, Problem const& problem) {
  return value_or(config, "kScoreBits", 32) == 16 ? problem.dtype : common::Precision::fp32;
}

}  // namespace

FamilyDescription const kDescription{
    .name = "naive",
    .source_file = [](Problem const&) -> std::string { return "naive.cu"; },
    FL_FAMILY_FUNCTIONS(naive),
    .precision_options = precision_options,
    .scratch = scratch,
    .score_precision = score_precision,
};

}  // namespace fl::device::naive
