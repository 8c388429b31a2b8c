#pragma once
// A compiled family config loaded on the GPU: its module, one kernel per launch step, and run(), which
// enqueues every step of one problem on the default stream.
#include <vector>

#include "kernels_src/fa_params.h"

#include "runtime/module.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tuner/family.hpp"

namespace fl::tuner {

class FamilyRunner {
 public:
  // Loads `program` and looks up the kernels the problem's launch steps name. Needs a current context.
  static runtime::Result<FamilyRunner> load(Family const& family, Config const& config,
                                            Problem const& problem, runtime::CompiledProgram const& program);

  // Enqueues every launch step with `params` (params.step set per step). Asynchronous.
  runtime::Status run(fa::AttentionParams params);

  std::vector<LaunchStep> const& steps() const { return steps_; }

 private:
  FamilyRunner(runtime::LoadedModule module, std::vector<runtime::Kernel> kernels,
               std::vector<LaunchStep> steps)
      : module_(std::move(module)), kernels_(std::move(kernels)), steps_(std::move(steps)) {}

  runtime::LoadedModule module_;
  std::vector<runtime::Kernel> kernels_;  // one per step
  std::vector<LaunchStep> steps_;
};

}  // namespace fl::tuner
