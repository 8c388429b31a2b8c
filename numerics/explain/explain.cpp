#include "numerics/explain/explain.hpp"

#include <stdexcept>

#include "numerics/emulator/prepared_problem.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics::explain {

using mutants::MutantId;
using mutants::MutantKind;

std::optional<std::string> why_not_explainable(MutantId id, common::Precision precision, bool given_scores) {
  mutants::MutantInfo const& m = mutants::info(id);
  switch (m.kind) {
    case MutantKind::bwd:
      return std::string(m.name) + " is a backward bug; fa-explain follows the forward's online softmax";
    case MutantKind::gpu_only:
      return std::string(m.name) +
             " needs concurrent GPU threads: " + std::string(m.cpu_not_applicable_reason);
    case MutantKind::fp8:
      if (!is_fp8(precision))
        return std::string(m.name) + " lives in the FP8 path: add --precision fp8_e4m3 (or fp8_e5m2)";
      if (id == MutantId::fp8_missing_descale && given_scores)
        return std::string(m.name) +
               " drops K's FP8 descale, and given scores have none: draw the row from an input family";
      return std::nullopt;
    case MutantKind::fwd:
      return std::nullopt;
  }
  return "unknown mutant kind";
}

std::vector<MutantId> explainable_mutants(common::Precision precision, bool given_scores) {
  std::vector<MutantId> out;
  for (mutants::MutantInfo const& m : mutants::kCatalogue)
    if (!why_not_explainable(m.id, precision, given_scores)) out.push_back(m.id);
  return out;
}

Explanation explain_row(RowProblem const& problem, int block, std::vector<MutantId> const& mutant_ids,
                        emulator::TraceArithmetic arithmetic, emulator::KeyOrder key_order) {
  if (block < 1 || block > emulator::kMaxTile)
    throw std::invalid_argument("--block " + std::to_string(block) + ": must be 1.." +
                                std::to_string(emulator::kMaxTile));
  for (MutantId id : mutant_ids)
    if (auto why = why_not_explainable(id, problem.recipe.claimed, problem.given_scores))
      throw std::invalid_argument("--mutant " + *why);

  Explanation x;
  x.block = block;
  x.key_order = key_order;
  x.arithmetic = arithmetic;
  emulator::EmulatorConfig config;
  config.precision = problem.recipe.claimed;
  config.tiles = {1, block};
  config.key_order = key_order;
  x.variants.push_back(
      {"correct", std::nullopt,
       emulator::trace_row(problem.operands, problem.recipe, config, problem.row, arithmetic)});
  for (MutantId id : mutant_ids) {
    config.mutants = mutants::MutantSet::only(id);
    x.variants.push_back(
        {std::string(mutants::info(id).name), id,
         emulator::trace_row(problem.operands, problem.recipe, config, problem.row, arithmetic)});
  }
  RowSample sample;
  sample.query_rows = {problem.row};
  SampledOutputs const ref = reference_sampled(problem.inputs, sample);
  x.exact = ref.o;
  x.exact_lse = ref.lse.at(0);
  return x;
}

}  // namespace fl::numerics::explain
