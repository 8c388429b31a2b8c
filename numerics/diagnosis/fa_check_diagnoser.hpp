#pragma once
// The differential diagnosis as fa-check's Diagnoser (numerics/check.hpp): the one line fa_check_main.cpp
// needs to name bugs.
#include <vector>

#include "numerics/check.hpp"
#include "numerics/diagnosis/diagnose.hpp"

namespace fl::numerics::diagnosis {

// extra_block_sizes (fa-check --block-n) join the candidate kBlockN and kBlockM (16..256). warp_columns
// (fa-check --warps-n): for each N > 1, FA-2 walks (both key-block orders) with key blocks split among N
// warp columns join the default walks (each adds one pass over the candidates: +1/3 of the work).
Diagnoser make_fa_check_diagnoser(std::vector<int> const& extra_block_sizes = {}, int threads = 0,
                                  std::vector<int> const& warp_columns = {});

}  // namespace fl::numerics::diagnosis
