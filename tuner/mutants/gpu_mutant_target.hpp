#pragma once
// fa-mutate --target gpu in one call: check the request (family, dtypes, tiles) before touching the GPU,
// then find the GPU, pick the NVRTC target for it, hold its context and build one GpuMutantRunner per
// family. numerics/ may not depend on tuner/ (tuner depends on numerics), so fa-mutate reaches this
// header only through its own link line (tuner/CMakeLists.txt links fl_tuner into it and defines
// FL_FA_MUTATE_WITH_GPU).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "numerics/precision.hpp"
#include "runtime/device.hpp"
#include "tuner/mutants/gpu_mutant_runner.hpp"

namespace fl::tuner {

// The families with FA_MUTANT_ switches that fa-mutate runs on the GPU: "fa2_sm80". (fa1 and naive
// share some headers but not the whole catalogue; they join once their campaign is 100%.)
std::vector<std::string> gpu_mutant_families();

struct GpuTargetRequest {
  std::vector<std::string> families;  // empty: every gpu_mutant_families()
  std::vector<numerics::Precision> precisions;
  int head_dim = 64;
  int block_m = 0, block_n = 0;  // 0: the family's default
  std::filesystem::path compile_db;
  std::optional<std::filesystem::path> kernels_dir;  // empty: runtime::resolve_kernels_dir's search
};

// Holds the device's primary context for as long as the runners run (declared first: destroyed last).
class GpuMutantTarget {
 public:
  GpuMutantTarget(runtime::PrimaryContext context, std::vector<std::unique_ptr<GpuMutantRunner>> runners)
      : context_(std::move(context)), runners_(std::move(runners)) {}
  runtime::DeviceInfo const& device() const { return context_.info(); }
  std::vector<std::unique_ptr<GpuMutantRunner>>& runners() { return runners_; }

 private:
  runtime::PrimaryContext context_;
  std::vector<std::unique_ptr<GpuMutantRunner>> runners_;
};

struct GpuTargetFailure {
  int exit_code = 0;    // runtime::kExitBadInput for the user's mistake, kExitNoGpu without a usable GPU
  std::string message;  // one line
};

std::variant<std::unique_ptr<GpuMutantTarget>, GpuTargetFailure> open_gpu_mutant_target(
    GpuTargetRequest const& request);

}  // namespace fl::tuner
