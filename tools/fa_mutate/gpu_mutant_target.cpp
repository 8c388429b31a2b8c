#include "tools/fa_mutate/gpu_mutant_target.hpp"

#include <algorithm>

#include "common/exit_codes.hpp"
#include "device/families/registry.hpp"
#include "numerics/mutants/catalogue.hpp"
#include "runtime/kernel_source.hpp"
#include "runtime/target_arch.hpp"

namespace fl::tools::fa_mutate {

using namespace fl::device;

namespace {

constexpr std::string_view kBackwardSuffix = "_bwd";

std::string joined(std::vector<std::string> const& names) {
  std::string out;
  for (auto const& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

GpuTargetFailure bad_input(std::string message) {
  return {common::kExitBadInput, std::move(message)};
}

bool is_backward_family(std::string_view name) {
  return name.size() > kBackwardSuffix.size() &&
         name.substr(name.size() - kBackwardSuffix.size()) == kBackwardSuffix;
}

// Whether the family's forward sources carry any catalogued switch on a preprocessor line.
bool carries_switches(std::unique_ptr<Family> family, std::filesystem::path const& kernels_dir) {
  auto source = load_family_source(std::move(family), Direction::forward, kernels_dir);
  if (!source) return false;
  return std::any_of(numerics::mutants::kCatalogue.begin(), numerics::mutants::kCatalogue.end(),
                     [&](auto const& m) { return source_has_switch(source->text, m.switch_name); });
}

}  // namespace

std::vector<std::string> gpu_mutant_families(std::filesystem::path const& kernels_dir) {
  std::vector<std::string> out;
  for (auto& family : all_families()) {
    std::string const name(family->name());
    if (!is_backward_family(name) && carries_switches(std::move(family), kernels_dir)) out.push_back(name);
  }
  return out;
}

std::variant<std::vector<GpuFamilyRun>, GpuTargetFailure> plan_gpu_mutant_runs(
    GpuTargetRequest const& request, runtime::TargetArch arch) {
  auto kernels_dir = runtime::resolve_kernels_dir(request.kernels_dir);
  if (!kernels_dir) return bad_input(kernels_dir.error().one_line());
  std::vector<std::string> const allowed = gpu_mutant_families(kernels_dir.value());
  std::vector<std::string> const families =
      request.families.empty() ? std::vector<std::string>{kDefaultGpuMutantFamily} : request.families;
  std::vector<GpuFamilyRun> runs;
  for (auto const& f : families) {
    if (std::find(allowed.begin(), allowed.end(), f) == allowed.end())
      return bad_input("--family " + f + ": allowed for --target gpu: " + joined(allowed));
    GpuMutantOptions options{f,
                             kernels_dir.value(),
                             arch,
                             request.compile_db,
                             request.block_m,
                             request.block_n,
                             request.head_dim,
                             request.racecheck};
    auto runner = GpuMutantRunner::create(options);
    if (!runner) return bad_input(runner.error().one_line());
    GpuFamilyRun run{std::move(runner.value()), {}, {}};
    std::vector<std::string> requested;
    for (common::Precision p : request.precisions) {
      requested.emplace_back(common::name(p));
      if (auto why = run.runner->unsupported_precision(p)) {
        run.skipped.push_back(std::string(common::name(p)) + " skipped: " + *why);
        continue;
      }
      Problem problem;
      problem.dtype = p;
      problem.shape.head_dim = request.head_dim;
      if (auto why = run.runner->config_violation(problem))
        return bad_input("--head-dim/--block-m/--block-n for " + f + ": " + *why);
      run.precisions.push_back(p);
    }
    if (run.precisions.empty())
      return bad_input("--family " + f + " runs none of the dtypes " + joined(requested) + " (" +
                       (run.skipped.empty() ? std::string("none given") : run.skipped.front()) +
                       "): give --dtype");
    runs.push_back(std::move(run));
  }
  return runs;
}

std::variant<std::unique_ptr<GpuMutantTarget>, GpuTargetFailure> open_gpu_mutant_target(
    GpuTargetRequest const& request) {
  // Everything the user chose is checked before the GPU is looked for: a wrong command line is exit 2 on
  // any machine. The arch here is provisional; the device decides it below.
  auto checked = plan_gpu_mutant_runs(request, runtime::TargetArch::sm_90a);
  if (auto const* failure = std::get_if<GpuTargetFailure>(&checked)) return *failure;

  auto context = runtime::PrimaryContext::retain(0);
  if (!context) {  // "no CUDA driver: ..." / "no CUDA device: ...": its first line only
    std::string const& message = context.error().message;
    return GpuTargetFailure{common::kExitNoGpu, message.substr(0, message.find('\n'))};
  }
  auto const& device = context->info();
  auto arch = runtime::arch_for_device(device.cc_major, device.cc_minor);
  if (!arch) return GpuTargetFailure{common::kExitNoGpu, device.name + ": " + arch.error().message};
  auto planned = plan_gpu_mutant_runs(request, arch.value());
  if (auto const* failure = std::get_if<GpuTargetFailure>(&planned)) return *failure;
  return std::make_unique<GpuMutantTarget>(std::move(context.value()),
                                           std::move(std::get<std::vector<GpuFamilyRun>>(planned)));
}

}  // namespace fl::tools::fa_mutate
