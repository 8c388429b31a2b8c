#pragma once
// The GPU architectures NVRTC compiles for. Only the ones FlashLab has kernels for are accepted, so a
// typo ("sm_09") or an untested target is one clear error rather than a CUBIN that nobody can run.
#include <string>
#include <string_view>

#include "runtime/result.hpp"

namespace fl::runtime {

enum class TargetArch { sm_80, sm_89, sm_90, sm_90a };

// "sm_90a": the spelling NVRTC's --gpu-architecture takes.
std::string_view arch_name(TargetArch arch);

// Compute capability the CUBIN is built for (sm_90a -> 90).
int arch_compute_capability(TargetArch arch);

// Accepts "sm_80", "sm80", "80" (and the same for 89, 90, 90a), case-insensitive. Anything else fails
// with stage "arch" and a message naming the bad value and the allowed ones.
Result<TargetArch> parse_target_arch(std::string_view text);

// "sm_80, sm_89, sm_90, sm_90a", for --help texts and error messages.
std::string allowed_arch_names();

// The best target whose CUBIN runs on a device of compute capability major.minor: sm_90a on 9.0 (the
// Hopper-only instructions need it), sm_89 on 8.9, sm_80 on other 8.x (SASS runs on a later minor of the
// same major). Fails for devices outside 8.x/9.0.
Result<TargetArch> arch_for_device(int cc_major, int cc_minor);

}  // namespace fl::runtime
