#include "tuner/families/fa3_sm90.hpp"

#include <cstring>

#include "kernels_src/fa3_sm90_config.h"
#include "kernels_src/fa_tma_params.h"
#include "runtime/tensor_map.hpp"

namespace fl::tuner {

namespace {

constexpr int kColumnsPerBox = 64;  // 16-bit columns in one 128-byte swizzle span: the maps' inner box

fa3::FwdTunables tunables_of(Config const& c, Problem const& problem) {
  return fa3::FwdTunables{problem.shape.head_dim,
                          2,
                          value_or(c, "kBlockN", 0),
                          value_or(c, "kConsumers", 0),
                          value_or(c, "kStages", 0),
                          value_or(c, "kPingPong", 0),
                          value_or(c, "kIntraWgOverlap", 0),
                          value_or(c, "kPersistent", 0)};
}

runtime::TensorElement element_of(numerics::Precision dtype) {
  return dtype == numerics::Precision::fp16 ? runtime::TensorElement::fp16 : runtime::TensorElement::bf16;
}

}  // namespace

std::string Fa3Sm90Family::source_file(Problem const&) const {
  return "fa3_sm90_fwd.cu";
}

std::vector<ParamSpec> Fa3Sm90Family::parameters() const {
  return {
      {"kConsumers", {1, 2, 3}, "consumer warpgroups, 64 query rows each (kBlockM = 64 x kConsumers)"},
      {"kBlockN",
       {64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224},
       "keys per block (wgmma N of S = Q K^T)"},
      {"kStages", {2, 3}, "K and V shared-memory slots each (TMA ring depth)"},
      {"kPingPong",
       {0, 1},
       "consumer warpgroups take turns issuing products (one's softmax overlaps another's GEMMs)"},
      {"kIntraWgOverlap", {0, 1}, "S of block j+1 issued before the softmax of block j"},
      {"kPersistent", {0, 1}, "one CTA per SM walking the tiles (1) or one CTA per tile (0)"},
  };
}

std::optional<std::string> Fa3Sm90Family::unsupported(Problem const& problem) const {
  if (problem.dtype != numerics::Precision::fp16 && problem.dtype != numerics::Precision::bf16)
    return "fa3_sm90 runs fp16 and bf16 (got " + std::string(numerics::name(problem.dtype)) + ")";
  int const d = problem.shape.head_dim;
  if (d != 64 && d != 128 && d != 256)
    return "fa3_sm90 runs head dims 64, 128, 256 (got " + std::to_string(d) + ")";
  if (problem.direction != Direction::forward)
    return "fa3_sm90 is a forward family (the backward is issue 16)";
  if (problem.shape.heads_kv <= 0 || problem.shape.heads_q % problem.shape.heads_kv != 0)
    return "heads_q must be a multiple of heads_kv";
  return std::nullopt;
}

std::optional<std::string> Fa3Sm90Family::violates(Config const& config, Problem const& problem) const {
  if (char const* why = fa3::violation(tunables_of(config, problem))) return std::string(why);
  return std::nullopt;
}

Config Fa3Sm90Family::default_config(Problem const& problem) const {
  // FlashAttention-3's tiles (hopper/tile_size.h) where they fit our register budget: d128 128 x 176
  // (128 x 128 causal); d256 128 x 64 (FA3's 128 x 80 spills 4 bytes under NVRTC 13.0); d64's 192 x 192
  // needs P in shared memory (FA3 reads P V's A from shared memory there), so d64 takes 192 rows x 112
  // keys, the largest key block whose O, S and P fit 160 registers. Causal masks launch one CTA per tile:
  // the hardware's block scheduler balanced the uneven causal tiles better than our static
  // longest-first order (H200, d128 128 x 128 bf16 n8192: 627 vs 576 TFLOP/s; full masks equal: 671 vs
  // 668; experiments/fa3_sm90).
  int const d = problem.shape.head_dim;
  Config c{{"kConsumers", 2}, {"kBlockN", 176},       {"kStages", 2},
           {"kPingPong", 1},  {"kIntraWgOverlap", 1}, {"kPersistent", 1}};
  if (problem.shape.causal) c["kPersistent"] = 0;
  if (d == 128 && problem.shape.causal) c["kBlockN"] = 128;
  if (d == 256) c["kBlockN"] = 64;
  if (d == 64) {
    c["kConsumers"] = 3;
    c["kBlockN"] = 112;
  }
  return c;
}

std::vector<std::string> Fa3Sm90Family::name_expressions(Config const& config, Problem const& problem) const {
  auto const t = tunables_of(config, problem);
  auto const i = [](int v) { return std::to_string(v); };
  return {"fa3_sm90_fwd<" + element_type_name(problem.dtype) + ", " + i(t.head_dim) + ", " + i(t.block_n) +
          ", " + i(t.consumers) + ", " + i(t.stages) + ", " + i(t.ping_pong) + ", " + i(t.intra_wg_overlap) +
          ", " + i(t.persistent) + ", " + (problem.shape.causal ? "true" : "false") + ">"};
}

std::vector<LaunchStep> Fa3Sm90Family::launches(Config const& config, Problem const& problem) const {
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
  return {step};
}

runtime::Result<std::vector<unsigned char>> Fa3Sm90Family::tma_argument(
    Config const& config, Problem const& problem, fa::AttentionParams const& params) const {
  auto api = runtime::driver_api();
  if (!api) return api.error();
  auto const t = tunables_of(config, problem);
  auto const& s = problem.shape;
  runtime::TensorElement const element = element_of(problem.dtype);
  auto view = [&](void const* base, int heads, int rows, long long batch_stride, long long head_stride,
                  long long row_stride) {
    return runtime::AttentionTensorView{reinterpret_cast<CUdeviceptr>(base),
                                        element,
                                        std::uint64_t(s.batch),
                                        std::uint64_t(heads),
                                        std::uint64_t(rows),
                                        std::uint64_t(s.head_dim),
                                        std::uint64_t(batch_stride),
                                        std::uint64_t(head_stride),
                                        std::uint64_t(row_stride)};
  };
  struct Map {
    runtime::AttentionTensorView view;
    unsigned box_rows;
  };
  Map const maps[4] = {
      {view(params.q, s.heads_q, s.seqlen_q, params.q_batch_stride, params.q_head_stride,
            params.q_row_stride),
       unsigned(fa3::block_m(t))},
      {view(params.k, s.heads_kv, s.seqlen_k, params.k_batch_stride, params.k_head_stride,
            params.k_row_stride),
       unsigned(t.block_n)},
      {view(params.v, s.heads_kv, s.seqlen_k, params.v_batch_stride, params.v_head_stride,
            params.v_row_stride),
       unsigned(t.block_n)},
      // O is stored by each consumer warpgroup for its own rows.
      {view(params.o, s.heads_q, s.seqlen_q, params.o_batch_stride, params.o_head_stride,
            params.o_row_stride),
       unsigned(fa3::kRowsPerConsumer)},
  };
  std::vector<unsigned char> bytes(sizeof(fa::TmaDescriptors));
  static_assert(sizeof(fa::TmaDescriptors) == 4 * runtime::kTensorMapBytes);
  for (int i = 0; i < 4; ++i) {
    auto encoded =
        runtime::encode_attention_tensor_map(*api.value(), maps[i].view, maps[i].box_rows, kColumnsPerBox);
    if (!encoded) return encoded.error();
    std::memcpy(bytes.data() + i * runtime::kTensorMapBytes, encoded->data(), runtime::kTensorMapBytes);
  }
  return bytes;
}

}  // namespace fl::tuner
