#pragma once
// The differential diagnosis as fa-check's Diagnoser (numerics/check.hpp): the one line fa_check_main.cpp
// needs to name bugs.
#include <vector>

#include "numerics/check.hpp"
#include "numerics/diagnosis/diagnose.hpp"

namespace fl::numerics::diagnosis {

// extra_block_sizes (fa-check --block-n) join the candidate kBlockN and kBlockM (16..256).
Diagnoser make_fa_check_diagnoser(std::vector<int> const& extra_block_sizes = {}, int threads = 0);

}  // namespace fl::numerics::diagnosis
