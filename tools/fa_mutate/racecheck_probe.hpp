#pragma once
// The child side of fa-mutate's racecheck (racecheck.hpp): `fa-mutate --racecheck-probe MUTANT ...`, a
// hidden mode that opens the GPU target exactly as the campaign does (same family, dtype, head dim, tiles,
// kernels_src and compile cache), runs MUTANT (or, with --racecheck-control, the correct kernel in MUTANT's
// direction) once on the tiny racecheck problem and prints kRacecheckProbeRan. compute-sanitizer runs it;
// the parent reads the sanitizer's summary and the probe's line from the output.
#include <cstdint>
#include <string>
#include <vector>

#include "common/precision.hpp"
#include "numerics/mutants/catalogue.hpp"
#include "tools/fa_mutate/gpu_mutant_target.hpp"

namespace fl::tools::fa_mutate {

struct RacecheckProbe {
  GpuTargetRequest request;  // one family, one dtype
  numerics::mutants::MutantId mutant{};
  bool control = false;  // run the correct kernel of the mutant's direction instead
  std::uint64_t seed = 1;
};

// fa-mutate's arguments (after the executable) that make the child run `probe` as the runner `options`
// would: the parent's GpuMutantRunner calls it, fa-mutate's main parses them back.
std::vector<std::string> racecheck_probe_arguments(GpuMutantOptions const& options,
                                                   RacecheckProbe const& probe);

// The tiny problem, at the campaign's head dim.
common::AttentionShape racecheck_shape(int head_dim);

// Runs the probe once on the GPU. Exit code: 0 it ran (kRacecheckProbeRan printed), 1 the GPU side failed,
// 2 or 3 as open_gpu_mutant_target says (a bad request, no GPU), each with one line on stderr.
int run_racecheck_probe(RacecheckProbe const& probe);

}  // namespace fl::tools::fa_mutate
