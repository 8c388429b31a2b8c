#pragma once
// The GPU target of fa-mutate: a kernel family from kernels_src/ compiled through NVRTC with one
// FA_MUTANT_<ID> switch defined (-D<switch>=1), launched on the inputs the campaign generates, its O and
// LSE read back into numerics' AttentionOutputs for the verifier and the diagnosis.
//
// Each (mutant, problem class) is compiled once and the CompiledProgram kept in the runner: a campaign runs
// every mutant over ~20 inputs, and the problem class (dtype, head dim, causal, the config's tiles: exactly
// what the kernel's name expression names) changes far less often than the input. With a database path,
// compiles go through the tuner's SQLite compile cache, so a second campaign on the same kernels_src and
// NVRTC compiles nothing.
//
// The backward (bwd-* mutants, bwd-race) needs a backward family of the same name + "_bwd" in the
// registry; until one is registered they are not applicable, with that reason.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "numerics/mutants/mutant_runner.hpp"
#include "runtime/compile_request.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/result.hpp"
#include "runtime/target_arch.hpp"
#include "tuner/compile/compile_service.hpp"
#include "tuner/family.hpp"

namespace fl::tuner {

struct GpuMutantOptions {
  std::string family = "fa2_sm80";
  std::filesystem::path kernels_dir;  // resolved kernels_src (runtime::resolve_kernels_dir)
  runtime::TargetArch arch = runtime::TargetArch::sm_90a;
  std::filesystem::path compile_db;  // SQLite compile cache; empty: every program is compiled
  // Tiles of the mutants under test, overriding the family's default config (0 keeps the default). They
  // matter: the diagnosis replays the emulator at candidate tiles, and fa-mutate adds these to them.
  int block_m = 0;
  int block_n = 0;
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
                                            numerics::Precision precision) const override;
  // Throws std::runtime_error (with NVRTC's log for a compile failure) when the GPU side fails.
  numerics::AttentionOutputs run(std::optional<numerics::mutants::MutantId> mutant,
                                 numerics::AttentionInputs const& inputs,
                                 numerics::Precision precision) override;
  int repeats(numerics::mutants::MutantId id) const override;
  bool has_backward(numerics::Precision) const override { return false; }
  // {"family": ..., "arch": ..., "kBlockM": ..., ...}: the config run() compiles for this problem.
  std::string config_json(std::optional<numerics::mutants::MutantId> mutant,
                          numerics::AttentionShape const& shape,
                          numerics::Precision precision) const override;

  // Why the family cannot run `precision` at all (fa2_sm80: fp16 and bf16 only), or nullopt.
  std::optional<std::string> unsupported_precision(numerics::Precision precision) const;
  // The family's default config for `problem` with the requested tiles; a broken constraint is reported
  // by config_violation().
  Config config_for(Problem const& problem) const;
  std::optional<std::string> config_violation(Problem const& problem) const;
  // The NVRTC request of `mutant` (nullopt: the correct kernel) for `problem`: the switch is its only -D
  // beyond the family's own.
  runtime::Result<runtime::CompileRequest> compile_request(std::optional<numerics::mutants::MutantId> mutant,
                                                           Problem const& problem) const;
  // The program of (mutant, problem class), compiled on first use and kept.
  runtime::Result<runtime::CompiledProgram const*> program(std::optional<numerics::mutants::MutantId> mutant,
                                                           Problem const& problem);
  std::size_t programs_held() const { return programs_.size(); }

 private:
  GpuMutantRunner(GpuMutantOptions options, std::unique_ptr<Family> family, std::string source_text,
                  std::string source_files);

  GpuMutantOptions options_;
  std::unique_ptr<Family> family_;
  std::string source_text_;   // the forward's kernels_src files, concatenated: where switches are looked for
  std::string source_files_;  // "fa2_sm80_fwd.cu and the 7 headers it includes", for reasons
  CompileService compiler_;
  // (mutant index or -1, name expressions) -> program
  std::map<std::pair<int, std::string>, runtime::CompiledProgram> programs_;
};

// Whether `text` holds `switch_name` as a whole token on a preprocessor line (#ifdef, #ifndef, #if
// defined(...)): a mention in a comment or a longer name does not count.
bool source_has_switch(std::string_view text, std::string_view switch_name);

}  // namespace fl::tuner
