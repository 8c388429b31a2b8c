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

#include "numerics/attention_shape.hpp"
#include "numerics/mutants/catalogue.hpp"
#include "numerics/precision.hpp"

namespace fl::numerics::emulator {

enum class LoopOrder {
  fa1,  // FlashAttention-1: outer loop over key/value blocks, O (normalised), m, l kept per row in between
  fa2,  // FlashAttention-2: outer loop over query blocks, O normalised once at the end
};

struct TileConfig {
  int block_m = 64;  // kBlockM: query rows per tile
  int block_n = 64;  // kBlockN: keys per tile
};

struct EmulatorConfig {
  Precision precision = Precision::bf16;
  TileConfig tiles;
  LoopOrder loop_order = LoopOrder::fa2;
  mutants::MutantSet mutants;
  int threads = 0;  // 0: both cores (std::thread::hardware_concurrency, at most kMaxThreads)
};

// LSE of a row that sees no key. -inf is the mathematical value (log of an empty sum); FlashAttention-2
// writes +inf instead, which a user comparing against us must know: the reference documents the same.
inline constexpr float kMaskedRowLse = -std::numeric_limits<float>::infinity();
inline constexpr int kMaxThreads = 2;

// Non-owning views of the problem, values as the user holds them (float); the emulator rounds them.
struct AttentionProblem {
  AttentionShape shape;
  std::span<float const> q;  // (B, H_q, N_q, D)
  std::span<float const> k;  // (B, H_kv, N_k, D)
  std::span<float const> v;  // (B, H_kv, N_k, D)
};

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

// Precision of O: the input precision, except fp8 whose output is bf16 (as FlashAttention-3 writes it).
Precision output_precision(Precision input);

// row_selection, when given, has one entry per (B, H_q, N_q) row: only the query tiles that hold a
// selected row are computed (the diagnosis uses this); rows of other tiles are NaN.
ForwardResult emulate_forward(AttentionProblem const& problem, EmulatorConfig const& config,
                              std::span<std::uint8_t const> row_selection = {});

// The FlashAttention-2 backward: runs emulate_forward with the same config for O, LSE and the row max,
// then recomputes P from Q, K and LSE per tile. d_o: (B, H_q, N_q, D). Throws std::invalid_argument for
// an fp8 precision (no FP8 backward exists in FlashAttention-3 either).
BackwardResult emulate_backward(AttentionProblem const& problem, std::span<float const> d_o,
                                EmulatorConfig const& config);

// The same, given the forward's outputs (O, LSE, row max) instead of recomputing them.
BackwardResult emulate_backward(AttentionProblem const& problem, std::span<float const> d_o,
                                ForwardResult const& forward, EmulatorConfig const& config);

}  // namespace fl::numerics::emulator
