#include "device/run/fp8_v_layout.hpp"

#include "kernels_src/fa3_sm90_v_transpose_map.h"

namespace fl::device {

std::size_t transposed_v_bytes(common::AttentionShape const& shape) {
  auto const matrices = static_cast<long long>(shape.batch) * shape.heads_kv;
  return std::size_t(fa3::vt_global_offset(shape.head_dim, shape.seqlen_k, matrices, 0, 0));
}

std::vector<std::uint8_t> transposed_v_codes(common::AttentionShape const& shape,
                                             std::span<std::uint8_t const> v_codes) {
  int const d = shape.head_dim, n = shape.seqlen_k, positions = fa3::transposed_keys(n);
  std::vector<std::uint8_t> out(transposed_v_bytes(shape), 0);  // padding: zero codes
  long long const matrices = static_cast<long long>(shape.batch) * shape.heads_kv;
  for (long long m = 0; m < matrices; ++m)
    for (int position = 0; position < positions; ++position) {
      int const key = fa3::permuted_key(position);
      if (key >= n) continue;
      std::uint8_t const* row = v_codes.data() + (m * n + key) * d;  // (B, H_kv, N_k, D)
      for (int column = 0; column < d; ++column)
        out[std::size_t(fa3::vt_global_offset(d, n, m, column, position))] = row[column];
    }
  return out;
}

}  // namespace fl::device
