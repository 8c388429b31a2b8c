#pragma once
// The FlashAttention-2 forward of ONE query row, block by block, with the state after each key block: the
// running max m, the rescale factor alpha = exp(m_old - m_new) ("scale"), the sum l and the output so far
// (acc / l). The arithmetic is the emulator's own (score_tile, fold_row, write_row), mutant switches
// included: in fp32 the final output equals emulate_forward's for that row with kBlockM = 1 bit for bit
// (tests/numerics/emulator/row_trace_test.cpp). fa-explain prints it.
#include <cstddef>
#include <vector>

#include "numerics/emulator/emulator.hpp"

namespace fl::numerics::emulator {

enum class TraceArithmetic {
  fp32,  // the kernels' (and the emulator's): fp32 statistics, P and O rounded as the recipe says
  fp64,  // the same steps in float64, nothing rounded: the lesson's numbers, in exact arithmetic
};

// Every figure is held in double: fp32 values are exact in it.
struct BlockState {
  int block = 0;      // key block index, in the order visited
  int first_key = 0;  // keys [first_key, end_key) of this block (end clipped at N_k)
  int end_key = 0;
  std::vector<double> scores;  // the block's kBlockN scores as this variant saw them (masked, padding: -inf)
  double m = 0;                // running max of the raw scores after this block
  double alpha = 0;            // factor the old l and accumulator were multiplied by (0 in the first block)
  double l = 0;                // running sum of the weights (carries the FP8 P offset when FP8)
  std::vector<double> output_so_far;  // (D): acc / l, what the row would be if the keys ended here
};

struct RowTrace {
  std::vector<BlockState> blocks;  // empty for a row that sees no key (causal): its key loop never runs
  std::vector<double> output;      // (D) as written (fp32: rounded to the output precision)
  double lse = 0;                  // natural log (-inf for a row that sees no key)
};

// Row `row` (flat (B, H_q, N_q) index) of the problem in `ops`, with config.tiles.block_n keys per block, its
// key order and mutants (config.loop_order must be fa2, config.warps_n 1). Throws std::invalid_argument for
// a bad row or config.
RowTrace trace_row(QuantizedOperands const& ops, PrecisionRecipe const& recipe, EmulatorConfig const& config,
                   std::size_t row, TraceArithmetic arithmetic = TraceArithmetic::fp32);

}  // namespace fl::numerics::emulator
