#pragma once
// The GPU target of fa-mutate: a kernel family from kernels_src/ compiled through NVRTC with one
// FA_MUTANT_<ID> switch defined (-D<switch>=1), launched on the inputs the campaign generates, its O and
// LSE read back into numerics' AttentionOutputs for the verifier and the diagnosis.
//
// Each (mutant, problem class) is compiled once and the CompiledProgram kept in the runner: a campaign runs
// every mutant over ~20 inputs, and the problem class (dtype, head dim, causal, the config's tiles: exactly
// what the kernel's name expression names) changes far less often than the input. With a database path,
// compiles go through device/'s SQLite compile cache (device/compile/compile_service.hpp), so a second
// campaign on the same kernels_src and NVRTC compiles nothing.
//
// Backward mutants (bwd-*, bwd-race) run the family's backward, the registered family of the same name +
// "_bwd" (fa2_sm80_bwd), at its default config, on the forward's O and LSE taken from the float64
// reference (as check_config judges a backward): the gradients are judged alone, and the diagnosis replays
// the emulator's backward mutants. The correct variant runs the forward and, where a backward exists, the
// backward too, so that a false positive of either shows in the baseline.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "device/compile/compile_service.hpp"
#include "device/family.hpp"
#include "numerics/campaign/mutant_runner.hpp"
#include "runtime/compile_request.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/result.hpp"
#include "runtime/target_arch.hpp"
#include "tools/fa_mutate/mutant_sources.hpp"
#include "tools/fa_mutate/racecheck.hpp"

namespace fl::tools::fa_mutate {

struct GpuMutantOptions {
  std::string family = "fa2_sm80";
  std::filesystem::path kernels_dir;  // resolved kernels_src (runtime::resolve_kernels_dir)
  runtime::TargetArch arch = runtime::TargetArch::sm_90a;
  std::filesystem::path compile_db;  // SQLite compile cache; empty: every program is compiled
  // Tiles of the mutants under test, overriding the family's default config (0 keeps the default). They
  // matter: the diagnosis replays the emulator at candidate tiles, and fa-mutate adds these to them.
  int block_m = 0;
  int block_n = 0;
  int head_dim = 64;  // the campaign's: decides whether the backward family can run
  // How a race mutant whose reruns agreed is racechecked (racecheck.hpp); nullopt: discover_racecheck()
  // (compute-sanitizer on PATH or in the toolkit, fa-mutate beside the running binary as the probe).
  std::optional<RacecheckSetup> racecheck = std::nullopt;
};

class GpuMutantRunner final : public numerics::mutants::MutantRunner {
 public:
  // Fails (stage "input") for a family not in the registry, (stage "source") when its kernels_src file
  // cannot be read. Needs no GPU: compiling and the not-applicable logic work without one; run() needs a
  // current CUDA context.
  static runtime::Result<std::unique_ptr<GpuMutantRunner>> create(GpuMutantOptions options);

  std::string_view target() const override { return "gpu"; }
  std::string family() const override { return options_.family; }
  std::optional<std::string> not_applicable(numerics::mutants::MutantId id,
                                            common::Precision precision) const override;
  // Throws std::runtime_error (with NVRTC's log for a compile failure) when the GPU side fails.
  numerics::AttentionOutputs run(std::optional<numerics::mutants::MutantId> mutant,
                                 numerics::AttentionInputs const& inputs,
                                 common::Precision precision) override;
  int repeats(numerics::mutants::MutantId id) const override;
  // compute-sanitizer's racecheck of the mutant on the tiny problem (racecheck.hpp), in a child process;
  // when it shows errors, the correct kernel of the same direction too (once per precision), so that only
  // hazards the correct kernel does not have kill.
  std::optional<numerics::mutants::RaceToolReport> race_tool_check(numerics::mutants::MutantId id,
                                                                   common::Precision precision,
                                                                   std::uint64_t seed) override;
  // A survivor whose CUBIN is bit-identical to the correct kernel's in every problem class it ran: the
  // family includes the header carrying the switch but never reaches its line (naive includes
  // fa_softmax.cuh for the exponent and never runs the online softmax), so no input can tell them apart.
  std::optional<std::string> equivalence_argument(numerics::mutants::MutantId id,
                                                  common::Precision precision) const override;
  bool has_backward(common::Precision precision) const override { return !backward_unsupported(precision); }
  // {"family": ..., "arch": ..., "kBlockM": ..., ...}: the config run() compiles for this mutant and problem
  // (the backward family's for a backward mutant).
  // kBlockM and kBlockN of the forward config (config_for) and, when the precision has a backward, of the
  // backward's reproducible config, each the larger: the campaign sizes its problems from them.
  numerics::mutants::CampaignTiles largest_tiles(common::Precision precision,
                                                 common::AttentionShape const& base) const override;
  std::string config_json(std::optional<numerics::mutants::MutantId> mutant,
                          common::AttentionShape const& shape, common::Precision precision) const override;

  // Why the family cannot run `precision` at all (fa2_sm80: fp16 and bf16 only), or nullopt.
  std::optional<std::string> unsupported_precision(common::Precision precision) const;
  // Why the backward cannot run at `precision` and the campaign's head dim (no <family>_bwd, or it does
  // not run them), or nullopt.
  std::optional<std::string> backward_unsupported(common::Precision precision) const;
  // Whether `mutant` runs the backward (bwd kind, and the gpu-only bwd-race).
  static bool runs_backward(numerics::mutants::MutantId mutant);
  // The config of the problem's direction: the forward family's default with the requested tiles, or the
  // backward family's default. A broken constraint is reported by config_violation().
  device::Config config_for(device::Problem const& problem) const;
  std::optional<std::string> config_violation(device::Problem const& problem) const;
  // The NVRTC request of `mutant` (nullopt: the correct kernel) for `problem` (forward or backward): the
  // switch is its only -D beyond the family's own.
  runtime::Result<runtime::CompileRequest> compile_request(std::optional<numerics::mutants::MutantId> mutant,
                                                           device::Problem const& problem) const;
  // The program of (mutant, problem class), compiled on first use and kept.
  runtime::Result<runtime::CompiledProgram const*> program(std::optional<numerics::mutants::MutantId> mutant,
                                                           device::Problem const& problem);
  std::size_t programs_held() const { return programs_.size(); }
  // One direction of `mutant` (nullopt: the correct kernel), as run() does it: fa-mutate --racecheck-probe
  // runs the correct kernel of a backward mutant's direction alone.
  numerics::AttentionOutputs run_direction(std::optional<numerics::mutants::MutantId> mutant,
                                           numerics::AttentionInputs const& inputs,
                                           common::Precision precision, device::Direction direction);

 private:
  GpuMutantRunner(GpuMutantOptions options, FamilySource forward, std::optional<FamilySource> backward);
  device::Family const& family_for(device::Problem const& problem) const;

  GpuMutantOptions options_;
  FamilySource forward_;
  std::optional<FamilySource> backward_;  // <family>_bwd, when registered
  device::CompileService compiler_;
  // (mutant index or -1, name expressions) -> program
  std::map<std::pair<int, std::string>, runtime::CompiledProgram> programs_;
  // (precision, backward?) -> the correct kernel's racecheck run
  std::map<std::pair<common::Precision, bool>, RacecheckRun> racecheck_controls_;
};

}  // namespace fl::tools::fa_mutate
