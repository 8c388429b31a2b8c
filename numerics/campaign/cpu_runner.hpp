#pragma once
// The CPU target of fa-mutate: the tiled emulator with one mutant switch on.
#include "numerics/campaign/mutant_runner.hpp"
#include "numerics/emulator/emulator.hpp"

namespace fl::numerics::mutants {

class CpuMutantRunner final : public MutantRunner {
 public:
  CpuMutantRunner(emulator::LoopOrder order, emulator::TileConfig tiles, int threads = 0);
  std::string_view target() const override { return "cpu"; }
  std::string family() const override;
  std::optional<std::string> not_applicable(MutantId id, common::Precision precision) const override;
  AttentionOutputs run(std::optional<MutantId> mutant, AttentionInputs const& inputs,
                       common::Precision precision) override;
  bool has_backward(common::Precision) const override { return true; }
  std::string config_json(std::optional<MutantId> mutant, common::AttentionShape const& shape,
                          common::Precision precision) const override;
  emulator::TileConfig tiles() const { return tiles_; }

 private:
  emulator::LoopOrder order_;
  emulator::TileConfig tiles_;
  int threads_;
};

}  // namespace fl::numerics::mutants
