#pragma once
// The tuning backend on the GPU: one compile pool (NVRTC workers, SQLite compile cache first), one
// reference cache shared by every candidate, one GpuEvaluator per family.
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "device/compile/compile_service.hpp"
#include "runtime/device.hpp"
#include "runtime/target_arch.hpp"
#include "tuner/compile/compile_pool.hpp"
#include "tuner/tune/gpu_evaluator.hpp"
#include "tuner/tune/reference_cache.hpp"
#include "tuner/tune/tuning_backend.hpp"
#include "tuner/tune/tuning_protocol.hpp"

namespace fl::tuner {

class GpuBackend final : public TuningBackend {
 public:
  // forward_store: the folder of fa-tune --forward-store (empty: none).
  GpuBackend(int jobs, runtime::TargetArch arch, std::filesystem::path const& kernels_dir,
             std::filesystem::path const& db_path, runtime::DeviceInfo device, EvaluationPace pace = {},
             std::filesystem::path const& forward_store = {});
  db::GpuKey gpu() const override { return gpu_; }
  std::string nvrtc_version() const override { return nvrtc_version_; }
  int compile_workers() const override { return pool_.workers(); }
  Evaluator& evaluator_for(device::Family const& family) override;
  double reference_seconds() const override { return references_.seconds_spent(); }
  ForwardSources forward_sources() const override {
    return {references_.forwards_ahead(), references_.forwards_kept(), references_.forwards_loaded(),
            references_.sets_ahead()};
  }

 private:
  CompilePool pool_;
  device::CompileService invalidator_;
  ReferenceCache references_;
  EvaluationPace pace_;
  device::CompileSpec spec_;
  runtime::DeviceInfo device_;
  db::GpuKey gpu_;
  std::string nvrtc_version_;
  struct FamilyEvaluator {
    std::unique_ptr<device::Family> family;  // the backend's own copy: the evaluator refers to it
    std::unique_ptr<GpuEvaluator> evaluator;
  };
  std::map<std::string, FamilyEvaluator> evaluators_;
};

}  // namespace fl::tuner
