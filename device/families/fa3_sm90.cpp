// fa3_sm90: the FlashAttention-3 forward on Hopper (kernels_src/fa3_sm90_fwd.cu): TMA, wgmma, warp
// specialisation with setmaxnreg, ping-pong and intra-warpgroup overlap, persistent tiles. Its tunables,
// constraints and shared-memory arithmetic are kernels_src/fa3_sm90_config.h, which this file and the
// kernel both compile: nothing here restates a rule.
#include "device/families/families.hpp"

#include "device/families/fp8_quantize_launches.hpp"
#include "device/families/tensor_maps.hpp"
#include "kernels_src/fa3_sm90_config.h"
#include "kernels_src/fa3_sm90_v_transpose_map.h"
#include "kernels_src/fa_tma_params.h"

namespace fl::device::fa3_sm90 {

namespace {

constexpr unsigned kOColumnsPerBox = 64;  // 16-bit O columns in one 128-byte swizzle span

bool fp8(Problem const& problem) {
  return common::is_fp8(problem.dtype);
}
// Descale factors read from device arrays (per-block scaling, or per-tensor quantised on the device).
bool per_block(Problem const& problem) {
  return fp8(problem) && descale_block_rows(problem) > 0;
}
// FP8 with O += P V in bf16 (Fp8Options::bf16_pv): V in bf16, no V^T and no transpose launch.
bool bf16_pv(Problem const& problem) {
  return fp8(problem) && problem.fp8.bf16_pv;
}
bool transposes_v(Problem const& problem) {
  return fp8(problem) && !bf16_pv(problem);
}

fa3::FwdTunables tunables_of(Config const& c, Problem const& problem) {
  return fa3::FwdTunables{problem.shape.head_dim,
                          fp8(problem) ? 1 : 2,
                          value_or(c, "kBlockN", 0),
                          value_or(c, "kConsumers", 0),
                          value_or(c, "kStages", 0),
                          value_or(c, "kPingPong", 0),
                          value_or(c, "kIntraWgOverlap", 0),
                          value_or(c, "kPersistent", 0),
                          value_or(c, "kSeparateO", 0),
                          bf16_pv(problem) ? 1 : 0,
                          value_or(c, "kTransposeV", 0)};
}
// V^T written by the transpose launch into scratch (kTransposeV = 0), not in the kernel, nor given as V.
bool transpose_launch(Config const& c, Problem const& problem) {
  return transposes_v(problem) && !fa3::transposes_v_in_kernel(tunables_of(c, problem)) &&
         !pretransposed_v(problem);
}

std::string transpose_name(Problem const& problem) {
  return "fa3_sm90_transpose_v<" + std::to_string(problem.shape.head_dim) + ">";
}

std::string source_file(Problem const& problem) {
  return fp8_program_file("fa3_sm90_fwd.cu", problem);
}

std::vector<ParamSpec> parameters() {
  return {
      {"kConsumers", {1, 2, 3}, "consumer warpgroups, 64 query rows each (kBlockM = 64 x kConsumers)"},
      {"kBlockN",
       {64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256},
       "keys per block (wgmma N of S = Q K^T; FP8: 64, 128, 256)"},
      {"kStages", {2, 3}, "K and V shared-memory slots each (TMA ring depth)"},
      {"kPingPong",
       {0, 1},
       "consumer warpgroups take turns issuing products (one's softmax overlaps another's GEMMs)"},
      {"kIntraWgOverlap", {0, 1}, "S of block j+1 issued before the softmax of block j"},
      {"kPersistent",
       {fa3::kOneCtaPerTile, fa3::kStaticTiles, fa3::kDynamicTiles},
       "one CTA per tile (0), or one CTA per SM taking every gridDim-th tile (1) or the next tile from a "
       "counter (2)"},
      {"kSeparateO",
       {0, 1},
       "O staged in a tile of its own, Q released before the epilogue so the next tile's Q loads during it "
       "(1), or O staged in Q's rows (0)"},
      {"kTransposeV",
       {0, 1},
       "FP8 (V^T) only: V^T written by a transpose launch first (0) or in the kernel from row-major V tiles "
       "staged in shared memory (1); the rules reject 1 elsewhere"},
  };
}

std::optional<std::string> unsupported(Problem const& problem) {
  if (problem.dtype != common::Precision::fp16 && problem.dtype != common::Precision::bf16 && !fp8(problem))
    return "fa3_sm90 runs fp16, bf16, fp8_e4m3 and fp8_e5m2 (got " +
           std::string(common::name(problem.dtype)) + ")";
  int const d = problem.shape.head_dim;
  if (d != 64 && d != 128 && d != 256)
    return "fa3_sm90 runs head dims 64, 128, 256 (got " + std::to_string(d) + ")";
  if (problem.direction != Direction::forward)
    return "fa3_sm90 is a forward family (the backward is issue 16)";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  // The device quantisation kernels write V's FP8 codes; bf16 P V takes V as it is.
  if (bf16_pv(problem) && problem.fp8.on_device)
    return "fa3_sm90's bf16 P.V takes host-quantised operands (--fp8-quantize host)";
  // bf16 P V reads row-major bf16 V (N-major), never V^T.
  if (bf16_pv(problem) && pretransposed_v(problem))
    return "a pre-transposed V (--fp8-v-layout transposed) is FP8 P.V's V^T; bf16 P.V (--fp8-pv bf16) reads "
           "row-major V";
  return std::nullopt;
}

std::optional<std::string> violates(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  if (char const* why = fa3::violation(t)) return std::string(why);
  if (pretransposed_v(problem) && t.transpose_v != 0)
    return "a pre-transposed V (--fp8-v-layout transposed) is read as it is: kTransposeV must be 0 (1 would "
           "transpose it again)";
  // P V is one wgmma chain over the key block: its K and V factors must be one per block.
  if (per_block(problem) && descale_block_rows(problem) % t.block_n != 0)
    return "per-block FP8 scaling needs descale blocks of a multiple of kBlockN = " +
           std::to_string(t.block_n) + " rows (got " + std::to_string(descale_block_rows(problem)) + ")";
  return std::nullopt;
}

Config default_config(Problem const& problem) {
  // FlashAttention-3's tiles (hopper/tile_size.h) where they fit our register budget: d128 128 x 176
  // (128 x 128 causal); d256 128 x 80 (FA3's; ptxas (NVRTC 13.0) spills 4 bytes there, and it still beat
  // the spill-free 128 x 64 on the H200: bf16 full n8192 769 vs 725 TFLOP/s, n16384 726 vs 673); d64's
  // 192 x 192 needs P in shared memory (FA3 reads P V's A from shared memory there), so d64 takes 192 rows
  // x 112 keys, the largest key block whose O, S and P fit 160 registers. Causal masks take their tiles
  // from the dynamic counter (kDynamicTiles): the static persistent order lost to one CTA per tile (d128
  // 128 x 128 n8192: 576 vs 627 TFLOP/s), the counter beat both (bf16, same call: d64 n2048 333 vs 314
  // one CTA per tile, d128 n2048 446 vs 429, n8192 630 vs 624); full masks equal (671 vs 668): static.
  // All on the H200, experiments/fa3_sm90.
  int const d = problem.shape.head_dim;
  Config c{{"kConsumers", 2}, {"kBlockN", 176},       {"kStages", 2},
           {"kPingPong", 1},  {"kIntraWgOverlap", 1}, {"kPersistent", fa3::kStaticTiles},
           {"kSeparateO", 0}, {"kTransposeV", 0}};
  if (problem.shape.causal) c["kPersistent"] = fa3::kDynamicTiles;
  if (d == 128 && problem.shape.causal) c["kBlockN"] = 128;
  if (d == 256) c["kBlockN"] = 80;
  if (d == 64) {
    c["kConsumers"] = 3;
    c["kBlockN"] = 112;
  }
  if (transposes_v(problem)) {
    // FP8 P V: per head dim and mask, the one config best over n 1024-16384 in the H200's grid (e4m3,
    // 2026-12-04, 16-30 configs a problem, experiments/tuner/raw/2026-12-04-grid-140244Z and -141835Z; its
    // TFLOP/s over each n's best, geometric mean: d64 0.97 full / 0.99 causal, d128 0.97 / 0.98, d256 1.00 /
    // 0.99). Every winner ran without ping-pong and with O in its own shared memory. Against the former
    // default (FA3's tiles, ping-pong, O through P's buffer, causal one CTA per tile): d64 1.15-1.25x full /
    // 1.07-1.35x causal, d128 1.04-1.09x / 0.96-1.43x (0.96 at n16384), d256 1.03-1.09x / 1.05-1.10x.
    // Key blocks are 64, 128 or 256 (V^T panels). Causal keeps the dynamic tile order set above.
    c["kPingPong"] = 0;
    c["kSeparateO"] = 1;
    c["kConsumers"] = d == 64 ? 3 : 2;
    c["kBlockN"] = d == 128 && !problem.shape.causal ? 256 : 128;
    c["kIntraWgOverlap"] = d == 64 || (d == 128 && problem.shape.causal) ? 1 : 0;
    // V^T in the kernel from row-major V tiles (1) won causal d64 and d128 (geometric means 0.99 and 0.98
    // against 0.87 and 0.91 for the best with the transpose launch); the launch (0) won the rest. A V given
    // transposed (--fp8-v-layout transposed) is read as it is.
    if (problem.shape.causal && d != 256 && !pretransposed_v(problem)) c["kTransposeV"] = 1;
  }
  if (bf16_pv(problem)) {
    // bf16 P V: V's tiles and P's registers are twice FP8's. d64 2 x 256 with overlap needs 224 registers
    // for O, S and P (over the rule's 200): 2 x 128; d256 2 x 128 needs 288 KiB of shared memory: 2 x 64.
    // Compile-checked (no spills), not yet timed; causal one CTA per tile, as FP8 P V was first measured.
    c["kConsumers"] = 2;
    c["kBlockN"] = d == 64 ? 128 : d == 128 ? 128 : 64;
    if (d == 256) c["kIntraWgOverlap"] = 0;
    if (problem.shape.causal) c["kPersistent"] = fa3::kOneCtaPerTile;
  }
  // Per-block scaling takes the largest key block dividing the descale block.
  if (per_block(problem))
    while (c["kBlockN"] > 64 && descale_block_rows(problem) % c["kBlockN"] != 0) c["kBlockN"] /= 2;
  return c;
}

std::vector<std::string> name_expressions(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  auto const i = [](int v) { return std::to_string(v); };
  std::vector<std::string> names{
      "fa3_sm90_fwd<" + element_type_name(problem.dtype) + ", " + i(t.head_dim) + ", " + i(t.block_n) + ", " +
      i(t.consumers) + ", " + i(t.stages) + ", " + i(t.ping_pong) + ", " + i(t.intra_wg_overlap) + ", " +
      i(t.persistent) + ", " + (problem.shape.causal ? "true" : "false") + ", " +
      (per_block(problem) ? "true" : "false") +
      (t.separate_o || t.pv_bf16 || t.transpose_v ? ", " + i(t.separate_o) : std::string()) +
      (t.pv_bf16 || t.transpose_v ? ", " + i(t.pv_bf16) : std::string()) +
      (t.transpose_v ? ", " + i(t.transpose_v) : std::string()) + ">"};
  if (transpose_launch(config, problem)) names.push_back(transpose_name(problem));        // launched first
  for (auto const& name : fp8_quantize_name_expressions(problem)) names.push_back(name);  // before that
  return names;
}

std::vector<LaunchStep> launches(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  auto const& s = problem.shape;
  LaunchStep step;
  step.name_expression = name_expressions(config, problem).front();
  int const m_blocks = (s.seqlen_q + fa3::block_m(t) - 1) / fa3::block_m(t);
  step.grid = {unsigned(m_blocks * s.heads_q * s.batch), 1,
               1};  // the tile count; persistent: capped at the SMs
  step.persistent = t.persistent != 0;
  step.block = {unsigned(fa3::threads(t)), 1, 1};
  step.dynamic_shared_bytes = std::size_t(fa3::shared_bytes(t));
  if (!fp8(problem)) return {step};
  if (!transposes_v(problem)) return {step};    // bf16 P V: no V^T, and quantised on the host only
  auto steps = fp8_quantize_launches(problem);  // Q, K, V codes (none unless quantised on the device)
  if (!transpose_launch(config, problem)) {     // kTransposeV: V^T made in the kernel, or given as V
    steps.push_back(step);
    return steps;
  }
  LaunchStep transpose;  // V^T for P V's K-major FP8 B operand (fa3_sm90_transpose.cuh)
  transpose.name_expression = transpose_name(problem);
  transpose.grid = {unsigned(fa3::transposed_keys(s.seqlen_k) / fa3::kTransposeKeys), unsigned(s.heads_kv),
                    unsigned(s.batch)};
  transpose.block = {unsigned(fa3::kTransposeThreads), 1, 1};
  steps.push_back(transpose);
  steps.push_back(step);
  return steps;
}

std::pair<int, int> tile_rows_and_keys(Config const& config, Problem const& problem) {
  auto const t = tunables_of(config, problem);
  return {fa3::block_m(t), t.block_n};
}

ScratchBytes scratch(Config const& config, Problem const& problem) {
  ScratchBytes bytes;
  auto const& s = problem.shape;
  if (tunables_of(config, problem).persistent == fa3::kDynamicTiles) bytes.tile_counter = 2 * sizeof(int);
  if (transpose_launch(config, problem))
    bytes.v_transposed = std::size_t(s.batch) * s.heads_kv * s.head_dim * fa3::transposed_keys(s.seqlen_k);
  bytes.fp8_amax = fp8_amax_scratch_bytes(problem);
  return bytes;
}

std::vector<runtime::TensorMapSpec> tensor_maps(Config const& config, Problem const& problem,
                                                fa::AttentionParams const& params) {
  auto const t = tunables_of(config, problem);
  auto const& s = problem.shape;
  runtime::TensorElement const element = tensor_element(problem.dtype);
  int const element_bytes = fp8(problem) ? 1 : 2;
  // Q and K boxes: one swizzle span of the row (64 bytes for FP8 d64, else 128).
  unsigned const qk_columns = unsigned(fa3::swizzle_span(s.head_dim * element_bytes) / element_bytes);
  // Q, K, V, O in the order of fa::TmaDescriptors. O (16-bit; bf16 for FP8) is stored by each consumer
  // warpgroup for its own rows.
  std::vector<runtime::TensorMapSpec> maps{
      {attention_view(problem, element, params, AttentionTensor::q), unsigned(fa3::block_m(t)), qk_columns},
      {attention_view(problem, element, params, AttentionTensor::k), unsigned(t.block_n), qk_columns},
      {attention_view(problem, element, params, AttentionTensor::v), unsigned(t.block_n), kOColumnsPerBox},
      {attention_view(problem, element, params, AttentionTensor::o), unsigned(fa3::kRowsPerConsumer),
       kOColumnsPerBox},
  };
  static_assert(sizeof(fa::TmaDescriptors) == 4 * runtime::kTensorMapBytes);
  if (bf16_pv(problem)) maps[2].view.element = runtime::TensorElement::bf16;  // V rows of D, as 16-bit
  if (fp8(problem)) maps[3].view.element = runtime::TensorElement::bf16;
  if (fa3::transposes_v_in_kernel(t)) {
    // kTransposeV: row-major FP8 V (B, H_kv, N_k, D) in boxes of kBlockN keys x one swizzle span of D, as
    // K's (the kernel stages them and transposes in shared memory). Keys past N_k are zero-filled by the
    // copy engine: zero codes, as the transpose launch writes them, and their P is 0 (the tail mask).
    maps[2].box_columns = qk_columns;
  } else if (transposes_v(problem)) {
    // V^T (B, H_kv, D, keys padded; fa3::vt_global_offset): "rows" are the D columns of V, the inner extent
    // its padded keys. In the transpose launch's scratch, or V itself when it is given pre-transposed.
    auto const offset = [&](long long matrix, int column) {
      return std::uint64_t(fa3::vt_global_offset(s.head_dim, s.seqlen_k, matrix, column, 0));
    };
    void const* vt = pretransposed_v(problem) ? params.v : params.v_transposed;
    maps[2].view = runtime::AttentionTensorView{reinterpret_cast<CUdeviceptr>(vt),
                                                runtime::TensorElement::byte,
                                                std::uint64_t(s.batch),
                                                std::uint64_t(s.heads_kv),
                                                std::uint64_t(s.head_dim),
                                                std::uint64_t(fa3::transposed_keys(s.seqlen_k)),
                                                offset(s.heads_kv, 0),
                                                offset(1, 0),
                                                offset(0, 1)};
    maps[2].box_rows = unsigned(s.head_dim);
    maps[2].box_columns = unsigned(fa3::swizzle_span(t.block_n));
  }
  return maps;
}

}  // namespace

FamilyDescription const kDescription{
    .name = "fa3_sm90",
    .source_file = source_file,
    FL_FAMILY_FUNCTIONS(fa3_sm90),
    .scratch = scratch,
    .tile_rows_and_keys = tile_rows_and_keys,
    .tensor_maps = tensor_maps,
};

}  // namespace fl::device::fa3_sm90
