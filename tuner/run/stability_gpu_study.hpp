#pragma once
// experiments/stability measured on the GPU: the same inputs and rows as numerics/stability_study
// (stability_inputs, stability_rows) and the same RMSE against the float64 reference, but O from one of our
// 16-bit kernel families instead of the CPU emulator: each kBlockN of the study the family's space allows
// (its default config otherwise), or, for a family without kBlockN (naive: standard attention with S and
// P through memory), its default once. Rows come out in results.csv's columns with `source` (GPU, family,
// config), so they merge into the CPU rows' tables.
#include <functional>
#include <string>

#include "device/compile/compile_config.hpp"
#include "device/family.hpp"
#include "numerics/stability_study.hpp"
#include "runtime/result.hpp"

namespace fl::tuner {

// Needs a current context. `progress` receives each CSV line as it is made (and each skipped kBlockN, as a
// line starting with "#").
runtime::Result<std::string> run_stability_gpu_study(
    device::Family const& family, device::CompileSpec const& spec, numerics::StabilityOptions const& options,
    std::string const& source, std::function<void(std::string const&)> const& progress = {});

}  // namespace fl::tuner
