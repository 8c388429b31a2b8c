// device/run/fp8_v_layout.hpp on the CPU: the host's V^T (a pre-transposed V) is, byte for byte, what the
// transpose launch writes (kernels_src/fa3_sm90_transpose.cuh: V^T (B, H_kv, D, keys padded to 128), within
// every 16 keys position p holding key permuted_key(p), zero codes past N_k), read here through
// fa3_sm90_v_transpose_map.h's permuted_key and the launch's own address arithmetic.
#include "device/run/fp8_v_layout.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "kernels_src/fa3_sm90_v_transpose_map.h"

using namespace fl::device;

namespace {

// Distinct, never-zero codes per (matrix, key, column), so a misplaced byte or a lost zero shows.
std::vector<std::uint8_t> numbered_codes(fl::common::AttentionShape const& s) {
  std::vector<std::uint8_t> v(s.kv_elements());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::uint8_t(1 + (i * 7 + i / 251) % 255);
  return v;
}

}  // namespace

TEST_CASE("the host's pre-transposed V is the transpose launch's V^T, byte for byte", "[device][fp8]") {
  // Odd N_k (tails in a 16-key group and in the 128-key padding), exact multiples, GQA's H_kv, every d.
  for (auto [b, h_kv, n_k, d] : std::vector<std::array<int, 4>>{
           {2, 2, 1000, 128}, {1, 3, 333, 64}, {2, 1, 256, 256}, {1, 1, 1, 64}, {1, 2, 130, 128}}) {
    fl::common::AttentionShape s;
    s.batch = b;
    s.heads_q = s.heads_kv = h_kv;
    s.seqlen_q = s.seqlen_k = n_k;
    s.head_dim = d;
    INFO("b" << b << " h_kv" << h_kv << " n_k" << n_k << " d" << d);
    auto const v = numbered_codes(s);
    auto const vt = transposed_v_codes(s, v);
    long long const padded = (n_k + 127) / 128 * 128;  // the launch's fa3::transposed_keys
    REQUIRE(vt.size() == std::size_t(b) * h_kv * d * padded);
    CHECK(transposed_v_bytes(s) == vt.size());
    std::size_t wrong = 0, nonzero_padding = 0;
    for (int batch = 0; batch < b; ++batch)
      for (int head = 0; head < h_kv; ++head)
        for (int column = 0; column < d; ++column)
          for (long long position = 0; position < padded; ++position) {
            // The transpose launch's address: ((batch * H_kv + head) * D) * padded + column * padded + pos.
            std::uint8_t const got =
                vt[std::size_t(((batch * h_kv + head) * d) * padded + column * padded + position)];
            int const key = fa3::permuted_key(int(position));
            if (key >= n_k) {
              nonzero_padding += got != 0;
              continue;
            }
            wrong += got != v[std::size_t(((batch * h_kv + head) * n_k + key) * d + column)];
          }
    CHECK(wrong == 0);
    CHECK(nonzero_padding == 0);
  }
}

TEST_CASE("a V^T row holds P's fragment order: keys 0 1 8 9 2 3 10 11 4 5 12 13 6 7 14 15 per 16",
          "[device][fp8]") {
  // The order --fp8-v-layout's help promises, pinned by hand (the launch and the host read permuted_key).
  fl::common::AttentionShape s;
  s.seqlen_q = s.seqlen_k = 32;
  s.head_dim = 64;
  std::vector<std::uint8_t> v(s.kv_elements());
  for (int key = 0; key < 32; ++key) v[std::size_t(key) * 64] = std::uint8_t(key + 1);  // column 0: key + 1
  auto const vt = transposed_v_codes(s, v);
  int const order[16] = {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};
  for (int p = 0; p < 32; ++p) CHECK(int(vt[std::size_t(p)]) == 16 * (p / 16) + order[p % 16] + 1);
  for (int p = 32; p < 128; ++p) CHECK(vt[std::size_t(p)] == 0);  // padding to 128 positions
  CHECK(vt.size() == 64u * 128u);
}
