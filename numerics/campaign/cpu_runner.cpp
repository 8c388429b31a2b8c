#include "numerics/campaign/cpu_runner.hpp"

namespace fl::numerics::mutants {

CpuMutantRunner::CpuMutantRunner(emulator::LoopOrder order, emulator::TileConfig tiles, int threads)
    : order_(order), tiles_(tiles), threads_(threads) {}

std::string CpuMutantRunner::family() const {
  return order_ == emulator::LoopOrder::fa1 ? "fa1" : "fa2";
}

std::optional<std::string> CpuMutantRunner::not_applicable(MutantId id, common::Precision precision) const {
  MutantInfo const& m = info(id);
  if (!cpu_applicable(id)) return "GPU only: " + std::string(m.cpu_not_applicable_reason);
  if (m.kind == MutantKind::fp8 && !is_fp8(precision))
    return "FP8 only: there is no FP8 descale or P quantisation at " + std::string(name(precision));
  return std::nullopt;
}

std::string CpuMutantRunner::config_json(std::optional<MutantId>, common::AttentionShape const&,
                                         common::Precision) const {
  return "{\"loop_order\": \"" + family() + "\", \"kBlockM\": " + std::to_string(tiles_.block_m) +
         ", \"kBlockN\": " + std::to_string(tiles_.block_n) + "}";
}

AttentionOutputs CpuMutantRunner::run(std::optional<MutantId> mutant, AttentionInputs const& inputs,
                                      common::Precision precision) {
  emulator::EmulatorConfig config;
  config.precision = precision;
  config.tiles = tiles_;
  config.loop_order = order_;
  config.mutants = mutant ? MutantSet::only(*mutant) : MutantSet::none();
  config.threads = threads_;
  return emulator::emulate(inputs, config);
}

}  // namespace fl::numerics::mutants
