#pragma once
// The problem as the kernel sees it: operands rounded or quantised once, with per-head views. Checks the
// shape and the tile sizes first, so every loop can trust them.
#include <cstddef>

#include "numerics/emulator/emulator.hpp"
#include "numerics/emulator/operands.hpp"
#include "numerics/emulator/tile_primitives.hpp"

namespace fl::numerics::emulator {

class PreparedProblem {
 public:
  PreparedProblem(AttentionProblem const& problem, EmulatorConfig const& config);
  // View of query head bh = b * H_q + h with its key/value head.
  HeadView head(std::size_t bh) const;

 private:
  AttentionShape shape_;
  Operand q_, k_, v_;
};

// Throws std::invalid_argument naming the bad value: sizes that do not match the shape, H_q not a multiple
// of H_kv, a tile size outside 1..1024.
void validate(AttentionProblem const& problem, EmulatorConfig const& config);

}  // namespace fl::numerics::emulator
