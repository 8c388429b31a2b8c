#pragma once
// Compiles every config of a family's search space for one problem class (dtype, head dim, causal,
// direction) with NVRTC, and reports the ptxas resources of each: what `fa-bench --compile-space` prints.
// Needs no GPU. Configs are compiled in parallel, one NVRTC program each.
#include <string>
#include <vector>

#include "device/compile/compile_config.hpp"
#include "runtime/ptxas_report.hpp"

namespace fl::tuner {

struct SpaceEntry {
  device::Config config;
  bool compiled = false;
  std::string error;  // first line of the NVRTC log when it failed
  int max_registers = 0;
  std::size_t spill_bytes = 0;  // stores + loads, summed over the config's kernels
  double compile_ms = 0;
};

std::vector<SpaceEntry> compile_space(device::Family const& family, device::Problem const& problem,
                                      device::CompileSpec const& spec, unsigned threads);

}  // namespace fl::tuner
