#pragma once
// The differential diagnosis as fa-check's Diagnoser (numerics/check.hpp): the one line fa_check_main.cpp
// needs to name bugs.
#include <vector>

#include "common/input_limits.hpp"
#include "numerics/check.hpp"
#include "numerics/diagnosis/diagnose.hpp"
#include "numerics/emulator/prepared_problem.hpp"

namespace fl::numerics::diagnosis {

// What fa-check --block-n and --warps-n allow: the emulator's tiles, and kNWarps' columns (at most 8).
inline constexpr common::CountRange kExtraBlockSize{"--block-n", 1, emulator::kMaxTile, "a tile size"};
inline constexpr common::CountRange kWarpColumns{"--warps-n", 1, 8, "warp columns"};

// extra_block_sizes (fa-check --block-n) join the candidate kBlockN and kBlockM (16..256). warp_columns
// (fa-check --warps-n): for each N > 1, FA-2 walks (both key-block orders) with key blocks split among N
// warp columns join the default walks (each adds one pass over the candidates: +1/3 of the work).
Diagnoser make_fa_check_diagnoser(std::vector<int> const& extra_block_sizes = {}, int threads = 0,
                                  std::vector<int> const& warp_columns = {});

}  // namespace fl::numerics::diagnosis
