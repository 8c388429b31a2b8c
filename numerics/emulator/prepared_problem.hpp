#pragma once
// The problem as the kernel sees it: the quantised operands (numerics/quantized_operands.hpp: rounded or
// FP8-quantised values with one descale per row) and per-head views into them. Checks the shape and the
// tile sizes first, so every loop can trust them.
#include <cstddef>

#include "numerics/emulator/emulator.hpp"
#include "numerics/emulator/tile_primitives.hpp"

namespace fl::numerics::emulator {

// The largest kBlockM or kBlockN the emulator takes: far above any kernel's tile (256); guards against
// garbage configs.
inline constexpr int kMaxTile = 1024;

class PreparedProblem {
 public:
  // Non-owning: `ops` must outlive this object.
  PreparedProblem(QuantizedOperands const& ops, EmulatorConfig const& config);
  // View of query head bh = b * H_q + h with its key/value head.
  HeadView head(std::size_t bh) const;
  common::AttentionShape const& shape() const { return ops_->shape; }

 private:
  QuantizedOperands const* ops_;
};

// Throws std::invalid_argument naming the bad value: sizes that do not match the shape, H_q not a multiple
// of H_kv, a tile size outside 1..kMaxTile.
void validate(QuantizedOperands const& ops, EmulatorConfig const& config);

}  // namespace fl::numerics::emulator
