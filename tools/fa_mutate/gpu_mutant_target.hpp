#pragma once
// fa-mutate --target gpu in one call: check the request (family, dtypes, tiles) before touching the GPU,
// then find the GPU, pick the NVRTC target for it, hold its context and build one GpuMutantRunner per
// family. numerics/ may not use runtime/ (the GPU context, NVRTC), so only fa-mutate's main (tools/, above
// it) includes this header.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>
#include "runtime/target_arch.hpp"

#include "common/precision.hpp"
#include "runtime/device.hpp"
#include "tools/fa_mutate/gpu_mutant_runner.hpp"

namespace fl::tools::fa_mutate {

// The registered forward families that fa-mutate can run on the GPU: every family (not a "_bwd" one) whose
// kernels_src file or included headers carry at least one FA_MUTANT_ switch on a preprocessor line, in
// registry order (fa1, fa2_sm80, and any family added later, e.g. an FP8 one). Which mutants apply to a
// family is decided per mutant from the same sources (GpuMutantRunner::not_applicable), so nothing here is
// family-specific. kernels_dir: the resolved kernels_src.
std::vector<std::string> gpu_mutant_families(std::filesystem::path const& kernels_dir);
// The family run when --family is not given.
inline constexpr char const* kDefaultGpuMutantFamily = "fa2_sm80";

struct GpuTargetRequest {
  std::vector<std::string> families;  // empty: kDefaultGpuMutantFamily
  // Each family runs the ones it supports; a family that supports none of them is the user's mistake.
  std::vector<common::Precision> precisions;
  int head_dim = 64;
  int block_m = 0, block_n = 0;  // 0: the family's default
  std::filesystem::path compile_db;
  std::optional<std::filesystem::path> kernels_dir;  // empty: runtime::resolve_kernels_dir's search
  std::optional<RacecheckSetup> racecheck;           // empty: discover_racecheck() (racecheck.hpp)
};

struct GpuTargetFailure {
  int exit_code = 0;  // common::kExitBadInput for the user's mistake, common::kExitNoGpu without a usable GPU
  std::string message;  // one line
};

// One family's runner and the requested precisions it runs; `skipped` says, per precision it does not
// run, why (printed, never silently dropped).
struct GpuFamilyRun {
  std::unique_ptr<GpuMutantRunner> runner;
  std::vector<common::Precision> precisions;
  std::vector<std::string> skipped;
};

// Holds the device's primary context for as long as the runners run (declared first: destroyed last).
class GpuMutantTarget {
 public:
  GpuMutantTarget(runtime::PrimaryContext context, std::vector<GpuFamilyRun> runs)
      : context_(std::move(context)), runs_(std::move(runs)) {}
  runtime::DeviceInfo const& device() const { return context_.info(); }
  std::vector<GpuFamilyRun>& runs() { return runs_; }

 private:
  runtime::PrimaryContext context_;
  std::vector<GpuFamilyRun> runs_;
};

// The request checked without a GPU: one GpuFamilyRun per family (arch provisional: sm_90a), or the
// user's mistake (exit code 2). open_gpu_mutant_target calls it first.
std::variant<std::vector<GpuFamilyRun>, GpuTargetFailure> plan_gpu_mutant_runs(
    GpuTargetRequest const& request, runtime::TargetArch arch);

std::variant<std::unique_ptr<GpuMutantTarget>, GpuTargetFailure> open_gpu_mutant_target(
    GpuTargetRequest const& request);

}  // namespace fl::tools::fa_mutate
