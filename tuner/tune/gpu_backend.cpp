#include "tuner/tune/gpu_backend.hpp"

#include "device/families/registry.hpp"
#include "device/gpu_key.hpp"
#include "runtime/compile_request.hpp"

namespace fl::tuner {

GpuBackend::GpuBackend(int jobs, runtime::TargetArch arch, std::filesystem::path const& kernels_dir,
                       std::filesystem::path const& db_path, runtime::DeviceInfo device, EvaluationPace pace,
                       std::filesystem::path const& forward_store)
    : pool_(jobs, db_path),  // creates and migrates the file before its workers open it
      invalidator_(db_path),
      references_(pace.encode_inputs_once,
                  forward_store.empty() ? std::nullopt : std::optional<ForwardStore>(forward_store)),
      pace_(pace),
      spec_{.arch = arch, .kernels_dir = kernels_dir, .mutant_switches = {}},
      device_(std::move(device)),
      gpu_(device::gpu_key(device_)),
      nvrtc_version_(runtime::nvrtc_version()) {}

Evaluator& GpuBackend::evaluator_for(device::Family const& family) {
  auto& slot = evaluators_[std::string(family.name())];
  if (!slot.evaluator) {
    slot.family = device::find_family(family.name());
    slot.evaluator = std::make_unique<GpuEvaluator>(
        *slot.family, pool_, invalidator_, spec_, device_,
        TimingOptions{kTuningWarmupRuns, kTuningTimedRuns, std::nullopt, kTuningSettleMs}, references_,
        pace_);
  }
  return *slot.evaluator;
}

}  // namespace fl::tuner
