// fa-tune: JIT-compile attention kernel configs, verify and time them, keep everything in SQLite, and
// print the best config per problem. --compile-only needs no GPU.
#include <cstdio>
#include <exception>

#include "db/database.hpp"
#include "runtime/device.hpp"
#include "runtime/exit_codes.hpp"
#include "runtime/kernel_source.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/tune/compile_only.hpp"

namespace {

fl::runtime::TargetArch target_for(std::string const& arch) {
  // sm90 means Hopper code: sm_90a allows wgmma and setmaxnreg, which plain sm_90 rejects.
  if (arch == "sm80") return fl::runtime::TargetArch::sm_80;
  if (arch == "sm89") return fl::runtime::TargetArch::sm_89;
  return fl::runtime::TargetArch::sm_90a;
}

int run(int argc, char const* const argv[]) {
  using namespace fl;
  tuner::TuneOptions options;
  try {
    options = tuner::parse_tune_options(argc, argv);
  } catch (tuner::UsageError const& e) {
    std::fprintf(stderr, "fa-tune: %s (see fa-tune --help)\n", e.what());
    return runtime::kExitBadInput;
  }
  if (options.help) {
    std::fputs(options.help_text.c_str(), stdout);
    return runtime::kExitOk;
  }
  auto const arch = target_for(options.arch);
  auto kernels_dir = runtime::resolve_kernels_dir(
      options.kernels_dir.empty() ? std::nullopt : std::optional<std::filesystem::path>(options.kernels_dir));
  if (!kernels_dir) {
    std::fprintf(stderr, "fa-tune: %s\n", kernels_dir.error().one_line().c_str());
    return runtime::kExitBadInput;
  }
  std::filesystem::path const db_path =
      options.db_path.empty() ? db::default_database_path() : std::filesystem::path(options.db_path);

  if (options.compile_only) {
    try {
      (void)tuner::selected_families(options);  // an unknown --family is bad input: exit 2 before compiling
    } catch (tuner::UsageError const& e) {
      std::fprintf(stderr, "fa-tune: %s\n", e.what());
      return runtime::kExitBadInput;
    }
    auto const report =
        tuner::run_compile_only(options, arch, kernels_dir.value(), db_path, tuner::limits_for(arch));
    std::fputs(tuner::render_compile_only(report).c_str(), stdout);
    std::printf("database: %s\n", db_path.string().c_str());
    return runtime::kExitOk;
  }

  auto device = runtime::query_device();
  if (!device) {
    std::fprintf(stderr, "fa-tune: %s; timing needs an sm_90 GPU (--compile-only works without one)\n",
                 device.error().message.c_str());
    return runtime::kExitNoGpu;
  }
  std::fprintf(stderr, "fa-tune: timing on %s is not built yet; use --compile-only\n", device->name.c_str());
  return runtime::kExitNoGpu;
}

}  // namespace

int main(int argc, char* argv[]) {
  try {
    return run(argc, argv);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "fa-tune: %s\n", e.what());
    return 1;
  }
}
