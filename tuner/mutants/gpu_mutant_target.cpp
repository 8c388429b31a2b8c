#include "tuner/mutants/gpu_mutant_target.hpp"

#include <algorithm>

#include "runtime/exit_codes.hpp"
#include "runtime/kernel_source.hpp"
#include "runtime/target_arch.hpp"

namespace fl::tuner {

std::vector<std::string> gpu_mutant_families() {
  return {"fa2_sm80"};
}

namespace {

std::string joined(std::vector<std::string> const& names) {
  std::string out;
  for (auto const& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

GpuTargetFailure bad_input(std::string message) {
  return {runtime::kExitBadInput, std::move(message)};
}

}  // namespace

std::variant<std::unique_ptr<GpuMutantTarget>, GpuTargetFailure> open_gpu_mutant_target(
    GpuTargetRequest const& request) {
  std::vector<std::string> const allowed = gpu_mutant_families();
  std::vector<std::string> const families = request.families.empty() ? allowed : request.families;
  for (auto const& f : families)
    if (std::find(allowed.begin(), allowed.end(), f) == allowed.end())
      return bad_input("--family " + f + ": allowed for --target gpu: " + joined(allowed));
  auto kernels_dir = runtime::resolve_kernels_dir(request.kernels_dir);
  if (!kernels_dir) return bad_input(kernels_dir.error().one_line());

  // Everything the user chose is checked before the GPU is looked for: a wrong command line is exit 2 on
  // any machine. The arch here is provisional; the device decides it below.
  std::vector<std::unique_ptr<GpuMutantRunner>> runners;
  for (auto const& f : families) {
    GpuMutantOptions options{f,
                             kernels_dir.value(),
                             runtime::TargetArch::sm_90a,
                             request.compile_db,
                             request.block_m,
                             request.block_n};
    auto runner = GpuMutantRunner::create(options);
    if (!runner) return bad_input(runner.error().one_line());
    for (numerics::Precision p : request.precisions) {
      if (auto why = runner.value()->unsupported_precision(p))
        return bad_input("--dtype " + std::string(numerics::name(p)) + ": " + *why);
      Problem problem;
      problem.dtype = p;
      problem.shape.head_dim = request.head_dim;
      if (auto why = runner.value()->config_violation(problem))
        return bad_input("--head-dim/--block-m/--block-n for " + f + ": " + *why);
    }
  }

  auto context = runtime::PrimaryContext::retain(0);
  if (!context) {  // "no CUDA driver: ..." / "no CUDA device: ...": its first line only
    std::string const& message = context.error().message;
    return GpuTargetFailure{runtime::kExitNoGpu, message.substr(0, message.find('\n'))};
  }
  auto const& device = context->info();
  auto arch = runtime::arch_for_device(device.cc_major, device.cc_minor);
  if (!arch) return GpuTargetFailure{runtime::kExitNoGpu, device.name + ": " + arch.error().message};
  for (auto const& f : families) {
    GpuMutantOptions options{
        f, kernels_dir.value(), arch.value(), request.compile_db, request.block_m, request.block_n};
    runners.push_back(std::move(GpuMutantRunner::create(options).value()));
  }
  return std::make_unique<GpuMutantTarget>(std::move(context.value()), std::move(runners));
}

}  // namespace fl::tuner
