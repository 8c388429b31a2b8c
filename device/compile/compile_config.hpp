#pragma once
// One family config -> one NVRTC program: the family's kernels_src file with every header it includes,
// the config's kernels as name expressions, and the mutant switches (if any) as -D defines.
#include <filesystem>
#include <string>
#include <vector>

#include "device/family.hpp"
#include "runtime/compile_request.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/result.hpp"
#include "runtime/target_arch.hpp"

namespace fl::device {

struct CompileSpec {
  runtime::TargetArch arch = runtime::TargetArch::sm_90a;
  std::filesystem::path kernels_dir;         // resolved kernels_src
  std::vector<std::string> mutant_switches;  // e.g. {"FA_MUTANT_UNRESCALED_O"}: each defined as 1
};

// The request fa-tune and fa-bench compile (and hash for the compile cache).
runtime::Result<runtime::CompileRequest> make_family_request(Family const& family, Config const& config,
                                                             Problem const& problem, CompileSpec const& spec);

// make_family_request, then NVRTC. Fails (stage "compile") with the whole NVRTC log.
runtime::Result<runtime::CompiledProgram> compile_family_config(Family const& family, Config const& config,
                                                                Problem const& problem,
                                                                CompileSpec const& spec);

}  // namespace fl::device
