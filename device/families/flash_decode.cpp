// flash_decode: the split-KV forward for decoding (kernels_src/flash_decode_fwd.cu, Flash-Decoding): a few
// query rows against a long KV cache, the keys split over kSplits CTAs and their warps, the partial
// (O, m, l) merged by a second kernel. Its tunables, constraints, shared-memory arithmetic and grid are
// kernels_src/flash_decode_config.h, which this file and the kernels both compile: nothing here restates a
// rule.
#include "device/families/families.hpp"
#include "device/families/name_expression.hpp"

#include "kernels_src/flash_decode_config.h"

namespace fl::device::flash_decode {

namespace {

// A decode family: the partials cost partials x rows x D floats of scratch, and a long query block is
// what fa2_sm80 and fa3_sm90 are for.
constexpr int kMaxQueryRows = 128;
constexpr unsigned kMaxGridY = 65535;        // CUDA's limit on gridDim.y
constexpr long long kMaxGridX = 2147483647;  // and on gridDim.x
// The default split count aims at the three resident CTAs per SM of the default tiles on the H200 (132
// SMs) ...
constexpr int kTargetCtas = 3 * 132;
// ... while every partial keeps at least this many key blocks (a partial's fixed cost: its Q tile, the
// scratch it writes, its share of the combine).
constexpr int kMinBlocksPerPartial = 2;

fdec::Tunables tunables_of(Config const& c, Problem const& problem) {
  return fdec::Tunables{problem.shape.head_dim,    2,
                        value_or(c, "kBlockM", 0), value_or(c, "kBlockN", 0),
                        value_or(c, "kNWarps", 0), value_or(c, "kSplits", 0)};
}

long long rows_of(Problem const& problem) {
  auto const& s = problem.shape;
  return static_cast<long long>(s.batch) * s.heads_q * s.seqlen_q;
}

std::vector<ParamSpec> parameters() {
  return {
      {"kBlockM", {16, 32, 64}, "packed query rows per CTA (the query heads of a GQA group x n_q)"},
      {"kBlockN", {16, 32, 64, 128}, "keys per block"},
      {"kNWarps", {1, 2, 4, 8}, "warps per CTA, each walking its own range of key blocks"},
      {"kSplits", {1, 2, 4, 8, 16, 32, 64, 128}, "CTAs the keys of one (batch, kv head) are split over"},
  };
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (problem.dtype != common::Precision::fp16 && problem.dtype != common::Precision::bf16)
    return "flash_decode runs fp16 and bf16 (got " + std::string(common::name(problem.dtype)) + ")";
  int const d = problem.shape.head_dim;
  if (d != 64 && d != 128 && d != 256)
    return "flash_decode runs head dims 64, 128, 256 (got " + std::to_string(d) + ")";
  if (problem.direction != Direction::forward) return "flash_decode is a forward family";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  if (rows_of(problem) > kMaxGridX)
    return "flash_decode's combine runs one CTA per row: b x h_q x n_q must be at most 2^31 - 1";
  if (problem.shape.seqlen_q > kMaxQueryRows)
    return "flash_decode is the decode family: n_q up to " + std::to_string(kMaxQueryRows) + " (got " +
           std::to_string(problem.shape.seqlen_q) + "; longer queries: fa2_sm80, fa3_sm90)";
  return std::nullopt;
}

std::optional<std::string> violates(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  if (char const* why = fdec::violation(t)) return std::string(why);
  auto const& s = problem.shape;
  if (unsigned(s.heads_kv) * unsigned(fdec::row_blocks(t, s.heads_q, s.heads_kv, s.seqlen_q)) > kMaxGridY)
    return "h_kv x row blocks over the grid's 65535 (a larger kBlockM)";
  return std::nullopt;
}

Config default_config(Problem const& problem) {
  auto const& s = problem.shape;
  int const packed = fdec::packed_rows(s.heads_q, s.heads_kv, s.seqlen_q);
  // Key blocks of 8 KiB (64 keys at d64, 32 at d128, 16 at d256): a warp's two-slot ring of K and V is
  // 32 KiB, a two-warp CTA ~66-72 KiB, three CTAs per SM. That keeps ~100 KB of loads in flight per SM,
  // above the ~36 KB the H200's bandwidth-latency product asks for (4.8 TB/s x ~1 us over 132 SMs).
  // d64 takes 32-row tiles when a group has more than 16 rows (O and S of two row tiles fit the
  // registers); d128 and d256 keep one 16-row tile per warp. d64 with 16-row tiles takes 32-key blocks
  // and four warps (the same bytes per CTA): at 16 x 64 with two or four warps ptxas (NVRTC 13.0) capped
  // the split kernel at 128 registers and spilled 20 bytes (fa-bench --compile-space).
  bool const d64_single_tile = s.head_dim == 64 && packed <= 16;
  Config c{{"kBlockM", s.head_dim == 64 && packed > 16 ? 32 : 16},
           {"kBlockN", d64_single_tile ? 32 : 64 * 64 / s.head_dim},
           {"kNWarps", d64_single_tile ? 4 : 2},
           {"kSplits", 1}};
  auto t = tunables_of(c, problem);
  long long const base_ctas =
      static_cast<long long>(s.batch) * s.heads_kv * fdec::row_blocks(t, s.heads_q, s.heads_kv, s.seqlen_q);
  int const key_blocks = (s.seqlen_k + t.block_n - 1) / t.block_n;
  while (t.splits * 2 <= fdec::kMaxSplits && base_ctas * t.splits * 2 <= kTargetCtas &&
         key_blocks >= kMinBlocksPerPartial * t.splits * 2 * t.warps)
    t.splits *= 2;
  c["kSplits"] = t.splits;
  return c;
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  Config const split{{"kHeadDim", t.head_dim}, {"kBlockM", t.block_m}, {"kBlockN", t.block_n},
                     {"kNWarps", t.warps},     {"kSplits", t.splits},  {"Is_causal", problem.shape.causal}};
  return {name_expression(fa::signature::kFlashDecodeSplit, problem.dtype, split),
          name_expression(fa::signature::kFlashDecodeCombine, problem.dtype,
                          {{"kHeadDim", t.head_dim}, {"kPartials", fdec::partials(t)}})};
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  auto const& s = problem.shape;
  auto const names = name_expressions(config, problem);
  LaunchStep split;
  split.name_expression = names[0];
  split.grid = {unsigned(t.splits),
                unsigned(s.heads_kv * fdec::row_blocks(t, s.heads_q, s.heads_kv, s.seqlen_q)),
                unsigned(s.batch)};
  split.block = {unsigned(fdec::threads(t)), 1, 1};
  split.dynamic_shared_bytes = std::size_t(fdec::shared_bytes(t));
  LaunchStep combine;
  combine.name_expression = names[1];
  combine.grid = {unsigned(rows_of(problem)), 1, 1};
  combine.block = {unsigned(fdec::combine_threads(s.head_dim)), 1, 1};
  combine.step = 1;
  return {split, combine};
}

ScratchBytes scratch(Config const& config, Problem const& problem) {
  std::size_t const partial_rows =
      std::size_t(fdec::partials(tunables_of(config, problem))) * rows_of(problem);
  ScratchBytes b;
  b.m = sizeof(float) * partial_rows;
  b.l = sizeof(float) * partial_rows;
  b.o = sizeof(float) * partial_rows * problem.shape.head_dim;
  return b;
}

}  // namespace

FamilyDescription const kDescription{
    .name = "flash_decode",
    .source_file = [](Problem const&) -> std::string { return "flash_decode_fwd.cu"; },
    FL_FAMILY_FUNCTIONS(flash_decode),
    .scratch = scratch,
};

}  // namespace fl::device::flash_decode
