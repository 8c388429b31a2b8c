#include "device/family_runner.hpp"

#include <algorithm>

#include "kernels_src/fa_params.h"
#include "runtime/device.hpp"

namespace fl::device {
namespace {

// Encoded tensor-map sets kept per runner: the benchmark rotates three input sets; a few more is slack.
constexpr std::size_t kEncodedMapSets = 8;

runtime::Result<unsigned> current_sm_count() {
  auto api = runtime::driver_api();
  if (!api) return api.error();
  CUdevice device = 0;
  if (auto st =
          runtime::check_driver(*api.value(), api.value()->cuCtxGetDevice(&device), "cuCtxGetDevice", "load");
      !st)
    return st.error();
  int sms = 0;
  if (auto st = runtime::check_driver(
          *api.value(),
          api.value()->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
          "cuDeviceGetAttribute", "load");
      !st)
    return st.error();
  return unsigned(sms);
}

}  // namespace

runtime::Result<FamilyRunner> FamilyRunner::load(Family const& family, Config const& config,
                                                 Problem const& problem,
                                                 runtime::CompiledProgram const& program) {
  auto module = runtime::LoadedModule::load(program.cubin);
  if (!module) return module.error();
  auto steps = family.launches(config, problem);
  std::vector<runtime::Kernel> kernels;
  for (auto& step : steps) {
    auto const lowered = program.lowered_name(step.name_expression);
    if (lowered.empty())
      return runtime::Error{"load", "kernel " + step.name_expression + " was not compiled into the program",
                            ""};
    auto kernel = module->kernel(lowered);
    if (!kernel) return kernel.error();
    kernels.push_back(std::move(kernel.value()));
    if (step.persistent) {
      auto sms = current_sm_count();
      if (!sms) return sms.error();
      step.grid.x = std::min(step.grid.x, sms.value());
    }
  }
  TmaEncoder encoder = [&family, config, problem](fa::AttentionParams const& params) {
    return family.tma_argument(config, problem, params);
  };
  return FamilyRunner(std::move(module.value()), std::move(kernels), std::move(steps), std::move(encoder));
}

runtime::Result<std::vector<unsigned char> const*> FamilyRunner::tma_argument(
    fa::AttentionParams const& params) {
  for (auto const& e : encoded_)
    if (e.q == params.q && e.k == params.k && e.v == params.v && e.o == params.o && e.d_o == params.d_o)
      return &e.bytes;
  auto bytes = encoder_(params);
  if (!bytes) return bytes.error();
  if (encoded_.size() == kEncodedMapSets) encoded_.erase(encoded_.begin());
  encoded_.push_back(
      EncodedMaps{params.q, params.k, params.v, params.o, params.d_o, std::move(bytes.value())});
  return &encoded_.back().bytes;
}

runtime::Status FamilyRunner::run(fa::AttentionParams params) {
  auto maps = tma_argument(params);
  if (!maps) return maps.error();
  std::vector<unsigned char> const& tma = *maps.value();
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    auto const& step = steps_[i];
    params.step = step.step;
    runtime::LaunchConfig launch;
    launch.grid = step.grid;
    launch.block = step.block;
    launch.dynamic_shared_bytes = step.dynamic_shared_bytes;
    std::vector<void*> args = {&params};
    if (!tma.empty() && step.takes_tensor_maps) args.push_back(const_cast<unsigned char*>(tma.data()));
    if (auto st = runtime::launch(kernels_[i], launch, std::span<void*>(args)); !st) return st;
  }
  return {};
}

}  // namespace fl::device
