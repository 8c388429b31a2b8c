#pragma once
// Pruning: what can be rejected without timing. Before compiling, on what is derivable from the config
// (shared memory against the opt-in limit, threads per block); after compiling, on ptxas' report
// (spills, static + dynamic shared memory, registers that leave zero resident blocks). Each rejection
// carries its reason, which is printed and stored.
#include <optional>
#include <string>

#include "device/arch_limits.hpp"
#include "runtime/nvrtc_compiler.hpp"

namespace fl::tuner {

std::optional<std::string> prune_before_compile(std::size_t dynamic_shared_bytes, int block_threads,
                                                device::ArchLimits const& limits);

// Whether spills reject a compiled config. A candidate that spills is pruned; the family's default never is
// on spills (it is what a user runs untuned, so every problem measures it: fa3_sm90's d256 default spills
// 4-8 bytes under NVRTC 13.0 and ran faster than every spill-free config, device/families/fa3_sm90.cpp).
enum class SpillRule { prune, allow };

// Checks every entry kernel in the program.
std::optional<std::string> prune_on_resources(runtime::CompiledProgram const& program,
                                              std::size_t dynamic_shared_bytes, int block_threads,
                                              device::ArchLimits const& limits, SpillRule spills);

}  // namespace fl::tuner
