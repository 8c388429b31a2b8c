#pragma once
// fa-bench's modes besides checking and timing (tools/fa_bench_main.cpp): --compile-space, --error-study
// and --stability-study, each one small main, and the two helpers every mode of fa-bench writes with.
#include <filesystem>
#include <string>

#include "device/compile/compile_config.hpp"
#include "device/family.hpp"
#include "runtime/device.hpp"
#include "runtime/target_arch.hpp"
#include "tuner/cli/bench_options.hpp"

namespace fl::tools::fa_bench {

// The common writer (temporary name, then rename) reports failure by exception; fa-bench turns it into its
// one-line bad-input message.
bool write_or_false(std::filesystem::path const& path, std::string const& text);

// Today (UTC) as 2026-12-01: the date of every table fa-bench writes.
std::string today();

// --compile-space: every config, NVRTC only. Exit 1 when a config the host-side constraints allow fails to
// compile (the mirror of the kernel's static_asserts is wrong).
int compile_space_main(tuner::BenchOptions const& opt, device::Family const& family);

// --error-study PATH: the FP8 error analysis's forward rows measured on this GPU (tuner/run/fp8_error_study).
int error_study_main(tuner::BenchOptions const& opt, device::Family const& family,
                     device::CompileSpec const& spec, runtime::DeviceInfo const& device,
                     runtime::TargetArch arch);

// --stability-study PATH: experiments/stability's rows measured on this GPU (tuner/run/stability_gpu_study).
int stability_study_main(tuner::BenchOptions const& opt, device::Family const& family,
                         device::CompileSpec const& spec, runtime::DeviceInfo const& device,
                         runtime::TargetArch arch);

}  // namespace fl::tools::fa_bench
