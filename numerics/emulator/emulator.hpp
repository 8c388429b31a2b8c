#pragma once
// CPU emulator of the tiled FlashAttention algorithms, with the mutant switches of the catalogue.
//
// It computes what a GPU kernel with tiles kBlockM x kBlockN computes, in the same precisions: inputs
// rounded to the claimed precision (fp8: quantised with a scale, descaled in fp32), scores and softmax
// statistics in fp32 (float, never double), exp2 with the softmax scale folded into scale*log2(e), P
// rounded to the input type before P.V, fp32 accumulators, O rounded at the end. Causal masks are
// bottom-right aligned; GQA; any n (the tail key block is masked); fully masked rows give O = 0 and
// LSE = kMaskedRowLse. Deterministic: every output element is computed by one thread in a fixed order.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "common/precision.hpp"
#include "numerics/attention_tensors.hpp"
#include "numerics/mutants/catalogue.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/quantized_operands.hpp"

namespace fl::numerics::emulator {

enum class LoopOrder {
  fa1,  // FlashAttention-1: outer loop over key/value blocks, O (normalised), m, l kept per row in between
  fa2,  // FlashAttention-2: outer loop over query blocks, O normalised once at the end
};

// The order in which the FA-2 loop walks a query tile's key blocks. Kernels that walk them last to first
// (fa2_sm80: the blocks needing a mask come first, the rest run mask-free) give a different output for
// every bug whose effect depends on the order the running max rises in (unrescaled-o/-l, stale-max,
// normalize-in-loop), so the diagnosis must be able to replay either.
enum class KeyOrder { first_to_last, last_to_first };

struct TileConfig {
  int block_m = 64;  // kBlockM: query rows per tile
  int block_n = 64;  // kBlockN: keys per tile
};

struct EmulatorConfig {
  common::Precision precision =
      common::Precision::bf16;  // the claimed precision; its recipe says what is rounded to what
  TileConfig tiles;
  LoopOrder loop_order = LoopOrder::fa2;
  mutants::MutantSet mutants;
  int threads = 0;  // 0: both cores (std::thread::hardware_concurrency, at most kMaxThreads)
  // FA-2 order only (FA-1's outer loop is the key loop):
  KeyOrder key_order = KeyOrder::first_to_last;
  // Key columns of each block split among this many warps, each with its own running (m, l, O) over its
  // contiguous kBlockN / warps_n columns, merged once at the end (fa2_sm80's kWarpsN > 1, the FA-1 warp
  // layout): m = max m_w, l = sum l_w 2^(m_w - m), O = sum O_w 2^(m_w - m). 1: no split. Divides block_n.
  int warps_n = 1;
};

// LSE of a row that sees no key: -inf, the reference's convention (numerics/reference.hpp: the log of an
// empty sum). FlashAttention-2 writes +inf there, which fa-check accepts too.
inline constexpr float kMaskedRowLse = -std::numeric_limits<float>::infinity();
inline constexpr int kMaxThreads = 2;

struct ForwardResult {
  std::vector<float> o;        // (B, H_q, N_q, D), values of the output precision
  std::vector<float> lse;      // (B, H_q, N_q), natural log, kMaskedRowLse for a fully masked row
  std::vector<float> row_max;  // (B, H_q, N_q), final running max of the raw scores (for the backward)
};

struct BackwardResult {
  std::vector<float> dq;  // (B, H_q, N_q, D)
  std::vector<float> dk;  // (B, H_kv, N_k, D)
  std::vector<float> dv;  // (B, H_kv, N_k, D)
};

// Forward on the user's inputs: quantize_operands(in, recipe_for(config.precision)), then the tiles.
// row_selection, when given, has one entry per (B, H_q, N_q) row: only the query tiles that hold a
// selected row are computed (the diagnosis uses this); rows of other tiles are NaN.
ForwardResult emulate_forward(AttentionInputs const& in, EmulatorConfig const& config,
                              std::span<std::uint8_t const> row_selection = {});
// The same on operands already quantised with `recipe` (the diagnosis quantises once for many runs).
ForwardResult emulate_forward(QuantizedOperands const& ops, PrecisionRecipe const& recipe,
                              EmulatorConfig const& config, std::span<std::uint8_t const> row_selection = {});

// The FlashAttention-2 backward: runs the forward with the same config (mutants included) for O, LSE and
// the row max, then recomputes P from Q, K and LSE per tile. Needs in.d_o. FP8 follows the recipe's
// assumptions (dO quantised like Q, K, V; dS in bf16), as FlashAttention-3 publishes no FP8 backward.
BackwardResult emulate_backward(AttentionInputs const& in, EmulatorConfig const& config);
BackwardResult emulate_backward(QuantizedOperands const& ops, PrecisionRecipe const& recipe,
                                ForwardResult const& forward, EmulatorConfig const& config);

// Forward (and backward) as float64 outputs, the type the reference, the metrics and fa-check use; dQ and
// dK are rotated back when the operands went through incoherent processing.
AttentionOutputs to_attention_outputs(ForwardResult const& forward, BackwardResult const* backward = nullptr,
                                      QuantizedOperands const* ops = nullptr);
// Forward, plus the backward when the inputs carry dO, with recipe_for(config.precision) or a given recipe
// (FP8 per-block scaling, incoherent processing).
AttentionOutputs emulate(AttentionInputs const& in, EmulatorConfig const& config);
AttentionOutputs emulate(AttentionInputs const& in, PrecisionRecipe const& recipe,
                         EmulatorConfig const& config);

}  // namespace fl::numerics::emulator
