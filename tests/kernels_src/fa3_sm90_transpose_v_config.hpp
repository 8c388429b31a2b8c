#pragma once
// The FP8 config the in-kernel V transpose (kTransposeV = 1) is checked and timed with: fa3_sm90's default
// with kTransposeV = 1, except where its staged V tiles do not fit: d256's default 2 x 128 (no overlap)
// would need 289 KiB of shared memory, so d256 takes 2 x 64 with intra-warpgroup overlap (the tile the
// H200 ran at 918 / 876 TFLOP/s with the transpose launch, experiments/fa3_sm90_fp8).
#include "device/families/families.hpp"

namespace fl::test {

inline device::Config fa3_in_kernel_transpose_config(device::Family const& f, device::Problem const& p) {
  device::Config c = f.default_config(p);
  c["kTransposeV"] = 1;
  if (f.violates(c, p)) {
    c["kBlockN"] = 64;
    c["kIntraWgOverlap"] = 1;
  }
  return c;
}

}  // namespace fl::test
