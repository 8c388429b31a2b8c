#include "tuner/compile/prune.hpp"

#include <algorithm>

namespace fl::tuner {

namespace {
// Registers are allocated per warp in units of 256 (8 per thread), so a kernel's footprint is rounded up.
constexpr int kRegisterAllocationUnit = 8;
}  // namespace

std::optional<std::string> prune_before_compile(std::size_t dynamic_shared_bytes, int block_threads,
                                                device::ArchLimits const& limits) {
  if (dynamic_shared_bytes > limits.max_shared_per_block_optin)
    return "shared memory " + std::to_string(dynamic_shared_bytes) + " B over the opt-in limit " +
           std::to_string(limits.max_shared_per_block_optin) + " B";
  if (block_threads > limits.max_threads_per_block)
    return std::to_string(block_threads) + " threads per block over the limit " +
           std::to_string(limits.max_threads_per_block);
  return std::nullopt;
}

std::optional<std::string> prune_on_resources(runtime::CompiledProgram const& program,
                                              std::vector<device::LaunchStep> const& launches,
                                              device::ArchLimits const& limits, SpillRule spills) {
  auto const entries = program.resources.entries();
  runtime::KernelResources largest;  // for a launch whose kernel the report does not name
  for (auto const& kernel : entries) {
    if (spills == SpillRule::prune && kernel.spills())
      return "spills " + std::to_string(kernel.spill_store_bytes) + " B stores / " +
             std::to_string(kernel.spill_load_bytes) + " B loads in " + kernel.function;
    largest.shared_bytes = std::max(largest.shared_bytes, kernel.shared_bytes);
    largest.registers = std::max(largest.registers, kernel.registers);
  }
  if (entries.empty()) return std::nullopt;  // no report to check against
  for (auto const& launch : launches) {
    auto const* reported = program.resources_of(launch.name_expression);
    auto const& kernel = reported ? *reported : largest;
    std::string const which = reported ? " in " + reported->function : "";
    std::size_t const shared = kernel.shared_bytes + launch.dynamic_shared_bytes;
    if (shared > limits.max_shared_per_block_optin)
      return "shared memory " + std::to_string(shared) + " B (static + dynamic) over the opt-in limit" +
             which;
    int const threads = int(launch.block.x * launch.block.y * launch.block.z);
    int const regs_per_thread =
        (kernel.registers + kRegisterAllocationUnit - 1) / kRegisterAllocationUnit * kRegisterAllocationUnit;
    int const warps = (threads + device::kWarpSize - 1) / device::kWarpSize;
    if (regs_per_thread * device::kWarpSize * warps > limits.registers_per_sm)
      return "zero occupancy: " + std::to_string(kernel.registers) + " registers x " +
             std::to_string(threads) + " threads exceed the register file" + which;
  }
  return std::nullopt;
}

}  // namespace fl::tuner
