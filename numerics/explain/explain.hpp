#pragma once
// fa-explain's logic: one row's online softmax traced block by block for the correct algorithm and for
// catalogued mutants (numerics/mutants/catalogue.hpp), beside the float64 answer, and rendered as text
// with notes that read the trace the way the FlashAttention lesson does (why scale = 0 in block 0 is not a
// bug, where a bug's output lands against the answer, the first block where it departs).
#include <optional>
#include <string>
#include <vector>

#include "numerics/emulator/row_trace.hpp"
#include "numerics/explain/row_problem.hpp"
#include "numerics/mutants/catalogue.hpp"

namespace fl::numerics::explain {

// Why `id` cannot be shown on one row's forward online softmax at `precision` (backward, GPU-only, FP8 bugs
// without an FP8 precision, the K descale of given scores); std::nullopt when it can.
std::optional<std::string> why_not_explainable(mutants::MutantId id, common::Precision precision,
                                               bool given_scores);

// Every catalogued mutant that why_not_explainable accepts, in catalogue order.
std::vector<mutants::MutantId> explainable_mutants(common::Precision precision, bool given_scores);

struct Variant {
  std::string name;                         // "correct" or the mutant's id
  std::optional<mutants::MutantId> mutant;  // none for the correct algorithm
  emulator::RowTrace trace;
};

struct Explanation {
  int block = 0;
  emulator::TraceArithmetic arithmetic = emulator::TraceArithmetic::fp64;
  emulator::KeyOrder key_order = emulator::KeyOrder::first_to_last;
  std::vector<Variant> variants;  // correct first
  std::vector<double> exact;      // (D) the float64 reference's O of the row
  double exact_lse = 0;
};

// Throws std::invalid_argument for a block size outside 1..1024 or a mutant why_not_explainable refuses.
// fp64 runs the algorithm's steps in float64 on the problem's (fp32) operands; fp32 is the emulator's
// arithmetic for the problem's claimed precision.
Explanation explain_row(RowProblem const& problem, int block, std::vector<mutants::MutantId> const& mutants,
                        emulator::TraceArithmetic arithmetic = emulator::TraceArithmetic::fp64,
                        emulator::KeyOrder key_order = emulator::KeyOrder::first_to_last);

struct RenderOptions {
  int shown_dims = 4;  // components of a vector output printed (the rest as "...")
};

std::string render_text(RowProblem const& problem, Explanation const& explanation,
                        RenderOptions const& options = {});

// The trace as data (fa-explain --csv; experiments/online_softmax_explorer/plot.sh draws it): a header, then
// one line per key block visited, variant and output component, in the text's order (blocks, then variants,
// correct first, then components):
//   step,block,first_key,last_key,variant,dim,m,scale,l,output_so_far,answer
// step counts the blocks in the order visited (block is the key block's index: they differ last to first);
// keys first_key..last_key; m, scale, l, output so far as the text names them, answer the float64
// reference's component dim. Numbers in their shortest exact form (nan, inf, -inf as such), where the text
// rounds them. A variant has lines only for the blocks it visits.
std::string render_csv(Explanation const& explanation);

}  // namespace fl::numerics::explain
