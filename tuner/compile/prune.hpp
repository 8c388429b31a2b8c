#pragma once
// Pruning: what can be rejected without timing. Before compiling, on what is derivable from the config
// (shared memory against the opt-in limit, threads per block); after compiling, on ptxas' report
// (spills, static + dynamic shared memory, registers that leave zero resident blocks). Each rejection
// carries its reason, which is printed and stored.
#include <optional>
#include <string>
#include <vector>

#include "device/arch_limits.hpp"
#include "device/family.hpp"
#include "runtime/nvrtc_compiler.hpp"

namespace fl::tuner {

std::optional<std::string> prune_before_compile(std::size_t dynamic_shared_bytes, int block_threads,
                                                device::ArchLimits const& limits);

// Whether spills reject a compiled config. A candidate that spills is pruned; the family's default never is
// on spills (it is what a user runs untuned, so every problem measures it: fa3_sm90's d256 default spills
// 4-8 bytes under NVRTC 13.0 and ran faster than every spill-free config, device/families/fa3_sm90.cpp).
enum class SpillRule { prune, allow };

// Spills: every entry kernel of the program. Shared memory and occupancy: each launch against its own
// kernel (its static shared memory plus the launch's dynamic bytes, its registers times the launch's
// threads), not the largest of each over the program: FP8 fa3_sm90 d256's default launches a transpose
// kernel of 17 KiB static shared memory before a forward of 225 KiB dynamic, and their sum (242 KiB) pruned
// it on the H200 (2026-12-04) though each fits 227 KiB. A launch whose kernel ptxas did not report is
// checked against the largest static shared memory and registers of the program's entries.
std::optional<std::string> prune_on_resources(runtime::CompiledProgram const& program,
                                              std::vector<device::LaunchStep> const& launches,
                                              device::ArchLimits const& limits, SpillRule spills);

}  // namespace fl::tuner
