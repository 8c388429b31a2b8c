#pragma once
// The one thing fa-mutate needs from a target: "run this mutant (or the correct kernel) on these inputs in
// this precision, give me the outputs". The CPU target wraps the tiled emulator; the GPU target (integrated
// by the lead) compiles the kernel family through NVRTC with `-D<info(id).switch_name>` and launches it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/precision.hpp"
#include "numerics/attention_tensors.hpp"
#include "numerics/mutants/catalogue.hpp"

namespace fl::numerics::mutants {

// The largest query and key tiles the kernels a runner runs use (forward and backward): the campaign's
// problems are made large enough that each kernel walks at least two of each (mutation_campaign.hpp).
struct CampaignTiles {
  int block_m = 0;  // 0: no requirement
  int block_n = 0;
};

// What a race tool said about a race mutant whose reruns all agreed (MutantRunner::race_tool_check): a
// second detector, because a missing barrier is real whether or not it ever changes a bit on this GPU.
struct RaceToolReport {
  bool kills = false;  // the tool reports hazards of the mutant that the correct kernel does not have
  // A kill: "racecheck: 11 hazards (11 errors, 0 warnings) ..."; otherwise why nothing was shown ("no
  // compute-sanitizer on PATH: races were only tested by reruns", "racecheck: 0 hazards ...", a timeout).
  std::string verdict;
  std::string evidence;  // the tool's own line ("RACECHECK SUMMARY: ..."), when it printed one
};

class MutantRunner {
 public:
  virtual ~MutantRunner() = default;
  virtual std::string_view target() const = 0;  // "cpu", "gpu"
  virtual std::string family() const = 0;       // "fa2", "fa1" on the CPU; "fa2_sm80", ... on the GPU
  // Why `id` cannot run on this target, family and precision (a gpu-only mutant on the CPU, an fp8 mutant
  // at fp16, ...); nullopt when it can. Never silently skipped: fa-mutate prints the reason.
  virtual std::optional<std::string> not_applicable(MutantId id, common::Precision precision) const = 0;
  // Outputs of the mutant (nullopt: the correct kernel): O and LSE, plus dQ, dK, dV when the inputs carry dO
  // and the target has a backward for the precision. May throw std::runtime_error when the target fails.
  virtual AttentionOutputs run(std::optional<MutantId> mutant, AttentionInputs const& inputs,
                               common::Precision precision) = 0;
  // How many runs must agree bit for bit. 1 on the CPU (deterministic by construction); a GPU runner
  // returns more for races (bwd-race), which fa-mutate then detects as disagreement between runs.
  virtual int repeats(MutantId) const { return 1; }
  // For a mutant with repeats() > 1 whose reruns never differed: the target's race tool run on it once
  // (the GPU: compute-sanitizer's racecheck), `seed` for its inputs. nullopt: this target has no such tool
  // (the CPU, where nothing races), and the mutant survives as before.
  virtual std::optional<RaceToolReport> race_tool_check(MutantId, common::Precision, std::uint64_t /*seed*/) {
    return std::nullopt;
  }
  // Whether the target computes the backward for this precision (backward mutants need it).
  virtual bool has_backward(common::Precision precision) const = 0;
  // Why a mutant that survived every input cannot change any output on this target (its argument as an
  // equivalent mutant), or nullopt: then it is a survivor. The GPU target argues from the compiled code.
  virtual std::optional<std::string> equivalence_argument(MutantId, common::Precision) const {
    return std::nullopt;
  }
  // The kernel configuration `run` uses for this mutant, shape and precision, as one JSON object (tiles,
  // warp layout, key-block order, ...): recorded with each failure so that it can be replayed offline.
  virtual std::string config_json(std::optional<MutantId> mutant, common::AttentionShape const& shape,
                                  common::Precision precision) const = 0;
  // The tiles of the configs `run` uses for problems like `base` in this precision. The default (no
  // requirement) keeps the campaign's shape as given, as the CPU target's callers choose it with its tiles.
  virtual CampaignTiles largest_tiles(common::Precision, common::AttentionShape const&) const { return {}; }
};

}  // namespace fl::numerics::mutants
