#include "tools/fa_bench_modes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "common/atomic_file.hpp"
#include "common/exit_codes.hpp"
#include "device/problem.hpp"
#include "numerics/precision.hpp"
#include "runtime/kernel_source.hpp"
#include "tuner/compile/space_compile.hpp"
#include "tuner/run/fp8_error_study.hpp"
#include "tuner/run/stability_gpu_study.hpp"

namespace fl::tools::fa_bench {

using namespace fl::device;
using namespace fl::tuner;

bool write_or_false(std::filesystem::path const& path, std::string const& text) {
  try {
    common::write_file_atomically(path, text);
    return true;
  } catch (std::exception const&) {
    return false;
  }
}

std::string today() {
  auto const t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

int compile_space_main(BenchOptions const& opt, Family const& family) {
  auto const kernels_dir = runtime::resolve_kernels_dir(opt.kernels_dir);
  if (!kernels_dir) bench_bad_input(kernels_dir.error().one_line());
  device::CompileSpec const spec{opt.arch.value_or(runtime::TargetArch::sm_90a), kernels_dir.value(),
                                 opt.mutants};
  unsigned const threads = std::max(1u, std::thread::hardware_concurrency());
  bool all_compiled = true;
  for (auto const dtype : opt.dtypes)
    for (int const d : opt.head_dims)
      for (bool const causal : opt.causal) {
        Problem const p = timed_problem(opt, opt.seqlens.front(), d, causal, dtype);
        if (auto why = family.unsupported(p)) bench_bad_input(*why);
        auto const t0 = std::chrono::steady_clock::now();
        auto const entries = compile_space(family, p, spec, threads);
        double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        int spilling = 0, failed = 0;
        for (auto const& e : entries) {
          std::printf("  %-90s %s\n", to_string(e.config).c_str(),
                      e.compiled ? ("regs " + std::to_string(e.max_registers) + " spills " +
                                    std::to_string(e.spill_bytes))
                                       .c_str()
                                 : ("FAILED: " + e.error).c_str());
          spilling += e.compiled && e.spill_bytes > 0;
          failed += !e.compiled;
        }
        std::printf("%s %s d%d %s: %zu configs, %d failed, %d spill, %.1f s on %u threads\n",
                    std::string(family.name()).c_str(), std::string(common::name(dtype)).c_str(), d,
                    causal ? "causal" : "full", entries.size(), failed, spilling, s, threads);
        all_compiled = all_compiled && failed == 0;
      }
  return all_compiled ? common::kExitOk : common::kExitCheckFailed;
}

// --error-study PATH: the FP8 error analysis's forward rows measured on this GPU (tuner/run/fp8_error_study).
int error_study_main(BenchOptions const& opt, Family const& family, device::CompileSpec const& spec,
                     runtime::DeviceInfo const& device, runtime::TargetArch arch) {
  Fp8ErrorStudyOptions options;       // the family runs FP8 (validate_bench_plan)
  options.bf16_pv = opt.fp8.bf16_pv;  // each variant with P V in FP8 and in bf16, emulated rows beside
  options.head_dims = opt.head_dims;
  options.seqlens = opt.seqlens;
  options.source =
      device.name + " " + std::string(runtime::arch_name(arch)) + " " + opt.family + " " + today();
  auto csv = run_fp8_error_study(family, spec, options, [](std::string const& line) {
    std::printf("  %s", line.c_str());
    std::fflush(stdout);
  });
  if (!csv) {
    std::fprintf(stderr, "%s\n%s\n", csv.error().one_line().c_str(), csv.error().log.c_str());
    return common::kExitCheckFailed;
  }
  if (!write_or_false(opt.error_study, csv.value()))
    bench_bad_input("cannot write --error-study " + opt.error_study);
  std::printf("wrote %s\n", opt.error_study.c_str());
  return common::kExitOk;
}

// --stability-study PATH: experiments/stability's rows measured on this GPU (tuner/run/stability_gpu_study).
int stability_study_main(BenchOptions const& opt, Family const& family, device::CompileSpec const& spec,
                         runtime::DeviceInfo const& device, runtime::TargetArch arch) {
  numerics::StabilityOptions options;
  options.precisions = opt.dtypes;  // fp16 and bf16: validate_bench_plan
  std::string const source =
      device.name + " " + std::string(runtime::arch_name(arch)) + " " + opt.family + " " + today();
  auto csv = run_stability_gpu_study(family, spec, options, source, [](std::string const& line) {
    std::printf("  %s", line.c_str());
    std::fflush(stdout);
  });
  if (!csv) {
    std::fprintf(stderr, "%s\n%s\n", csv.error().one_line().c_str(), csv.error().log.c_str());
    return common::kExitCheckFailed;
  }
  if (!write_or_false(opt.stability_study, csv.value()))
    bench_bad_input("cannot write --stability-study " + opt.stability_study);
  std::printf("wrote %s\n", opt.stability_study.c_str());
  return common::kExitOk;
}

}  // namespace fl::tools::fa_bench
