#include "tuner/run/family_runner.hpp"

#include "kernels_src/fa_params.h"

namespace fl::tuner {

runtime::Result<FamilyRunner> FamilyRunner::load(Family const& family, Config const& config,
                                                 Problem const& problem,
                                                 runtime::CompiledProgram const& program) {
  auto module = runtime::LoadedModule::load(program.cubin);
  if (!module) return module.error();
  auto steps = family.launches(config, problem);
  std::vector<runtime::Kernel> kernels;
  for (auto const& step : steps) {
    auto const lowered = program.lowered_name(step.name_expression);
    if (lowered.empty())
      return runtime::Error{"load", "kernel " + step.name_expression + " was not compiled into the program",
                            ""};
    auto kernel = module->kernel(lowered);
    if (!kernel) return kernel.error();
    kernels.push_back(std::move(kernel.value()));
  }
  return FamilyRunner(std::move(module.value()), std::move(kernels), std::move(steps));
}

runtime::Status FamilyRunner::run(fa::AttentionParams params) {
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    auto const& step = steps_[i];
    params.step = step.step;
    runtime::LaunchConfig launch;
    launch.grid = step.grid;
    launch.block = step.block;
    launch.dynamic_shared_bytes = step.dynamic_shared_bytes;
    if (auto st = runtime::launch(kernels_[i], launch, params); !st) return st;
  }
  return {};
}

}  // namespace fl::tuner
