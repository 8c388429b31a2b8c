#include "numerics/emulator/operands.hpp"

#include <algorithm>
#include <cmath>

namespace fl::numerics::emulator {

Operand prepare_operand(Precision precision, std::span<float const> values, int head_dim) {
  std::size_t const rows = values.size() / static_cast<std::size_t>(head_dim);
  Operand out{std::vector<float>(values.begin(), values.end()), std::vector<float>(rows, 1.0f)};
  if (!is_fp8(precision)) {
    round_in_place(precision, out.values);
    return out;
  }
  float amax = 0.0f;
  for (float x : values) amax = std::max(amax, std::fabs(x));
  // An all-zero tensor keeps scale 1: any scale quantises it exactly.
  float const scale = amax > 0.0f ? static_cast<float>(max_finite(precision)) / amax : 1.0f;
  for (float& x : out.values) x = round_to(precision, x * scale);
  std::fill(out.row_descale.begin(), out.row_descale.end(), 1.0f / scale);
  return out;
}

}  // namespace fl::numerics::emulator
