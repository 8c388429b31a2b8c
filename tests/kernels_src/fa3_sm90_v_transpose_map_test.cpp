// kernels_src/fa3_sm90_v_transpose_map.h on the CPU: the in-kernel V transpose (kTransposeV = 1) leaves in
// the V^T slot the bytes that the transpose launch (fa3_sm90_transpose.cuh) followed by TMA's swizzled box
// copy leaves there, at every head dim and FP8 key block, tail keys included; every byte is written once;
// and every 8x8 matrix of its ldmatrix.trans and stmatrix is one wavefront. The models of TMA's swizzle
// and of P V's key order below are written from their specifications (address bits; the consumer's A
// fragment), not from the header's functions, which the emulated kernel uses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels_src/fa3_sm90_v_transpose_map.h"

namespace {

// CU_TENSOR_MAP_SWIZZLE_128B / _64B on a 1024- / 512-aligned box: address bits 4-6 (4-5) ^= bits 7-9 (7-8).
int tma_swizzle(int span, int linear) {
  return span == 128 ? linear ^ (((linear >> 7) & 7) << 4) : linear ^ (((linear >> 7) & 3) << 4);
}

// P V's A operand (fa3_sm90_consumer.cuh, pack_p): thread column c's A slots 4c..4c+3 of a 16-key half
// step hold keys 2c, 2c+1, 8+2c, 9+2c.
constexpr int kKeyAtPosition[16] = {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};

// prmt.b32 (PTX ISA): result byte i = byte selector nibble i of the pair (b:a), a bytes 0-3, b 4-7.
std::uint32_t prmt(std::uint32_t a, std::uint32_t b, std::uint32_t selector) {
  std::uint64_t const pair = (std::uint64_t(b) << 32) | a;
  std::uint32_t r = 0;
  for (int i = 0; i < 4; ++i)
    r |= std::uint32_t((pair >> (8 * ((selector >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
}

struct Tiles {
  std::vector<std::uint8_t> staged, expected;
};

// Key block `block` of V (seqlen_k keys x d codes): the staged row-major tile as TMA writes it (keys past
// seqlen_k zero-filled) and the V^T slot the launch path leaves: V^T (d, padded keys) in permuted order,
// copied by TMA in boxes of d rows x span positions.
Tiles tiles_of(std::vector<std::uint8_t> const& v, int seqlen_k, int d, int block_n, int block) {
  int const span_v = fa3::swizzle_span(d), span_t = fa3::swizzle_span(block_n);
  Tiles t{std::vector<std::uint8_t>(std::size_t(block_n) * d),
          std::vector<std::uint8_t>(std::size_t(block_n) * d)};
  auto code = [&](int key, int column) -> std::uint8_t {
    return key < seqlen_k ? v[std::size_t(key) * d + column] : 0;  // zero codes past N_k (both paths)
  };
  for (int k = 0; k < block_n; ++k)
    for (int c = 0; c < d; ++c)
      t.staged[std::size_t((c / span_v) * block_n * span_v + tma_swizzle(span_v, k * span_v + c % span_v))] =
          code(block * block_n + k, c);
  for (int c = 0; c < d; ++c)
    for (int x = 0; x < block_n; ++x) {
      int const key = block * block_n + 16 * (x / 16) + kKeyAtPosition[x % 16];
      t.expected[std::size_t((x / span_t) * d * span_t + tma_swizzle(span_t, c * span_t + x % span_t))] =
          code(key, c);
    }
  return t;
}

}  // namespace

TEST_CASE("fa3_sm90's permuted key order and swizzled offsets are TMA's and P V's", "[kernels][fp8]") {
  for (int p = 0; p < 64; ++p) CHECK(fa3::permuted_key(p) == 16 * (p / 16) + kKeyAtPosition[p % 16]);
  for (int span : {64, 128})
    for (int row = 0; row < 16; ++row)
      for (int byte = 0; byte < span; ++byte)
        CHECK(fa3::swizzled_offset(span, row, byte) == tma_swizzle(span, row * span + byte));
}

namespace {

// ldmatrix.m8n8.x4.trans.b16 and stmatrix.m8n8.x4.b16 (PTX ISA), on a byte array: lane l gives the row
// address of matrix l / 8, row l % 8 (16 bytes each); lane l = 4 r + q holds, per matrix m, register m.
// trans: register m = b16 elements (row 2q, column r) and (row 2q + 1, column r) of matrix m. stmatrix (not
// trans): register m = b16 elements (row r, columns 2q, 2q + 1). One matrix is one wavefront when its 8
// row addresses fall in 8 different 16-byte bank groups (address / 16 % 8).
using Rows = std::array<int, 32>;
std::array<std::array<std::uint32_t, 4>, 32> ldmatrix_trans(std::vector<std::uint8_t> const& smem,
                                                            Rows const& at) {
  std::array<std::array<std::uint32_t, 4>, 32> r{};
  for (int lane = 0; lane < 32; ++lane)
    for (int m = 0; m < 4; ++m) {
      int const row = lane / 4, q = lane % 4;
      std::uint32_t w = 0;
      for (int h = 0; h < 2; ++h)  // element (row 2q + h, column `row`): bytes 2 row, 2 row + 1
        for (int b = 0; b < 2; ++b)
          w |= std::uint32_t(smem[std::size_t(at[std::size_t(8 * m + 2 * q + h)] + 2 * row + b)])
               << (8 * (2 * h + b));
      r[std::size_t(lane)][std::size_t(m)] = w;
    }
  return r;
}
void stmatrix(std::vector<std::uint8_t>& smem, std::vector<int>& writes, Rows const& at,
              std::array<std::array<std::uint32_t, 4>, 32> const& r) {
  for (int lane = 0; lane < 32; ++lane)
    for (int m = 0; m < 4; ++m)
      for (int b = 0; b < 4; ++b) {
        std::size_t const i = std::size_t(at[std::size_t(8 * m + lane / 4)] + 4 * (lane % 4) + b);
        smem[i] = std::uint8_t(r[std::size_t(lane)][std::size_t(m)] >> (8 * b));
        ++writes[i];
      }
}
bool one_wavefront_per_matrix(Rows const& at) {
  for (int m = 0; m < 4; ++m) {
    std::set<int> groups;
    for (int row = 0; row < 8; ++row) groups.insert(at[std::size_t(8 * m + row)] / 16 % 8);
    if (groups.size() != 8) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("fa3_sm90's in-kernel V transpose writes the transpose launch's V^T slot, conflict-free",
          "[kernels][fp8]") {
  std::mt19937 rng(15);
  for (int d : {64, 128, 256})
    for (int block_n : {64, 128, 256}) {
      INFO("d" << d << " kBlockN " << block_n);
      int const seqlen_k = 2 * block_n - 37;  // the second block has a tail of 37 zero-filled keys
      std::vector<std::uint8_t> v(std::size_t(seqlen_k) * d);
      for (auto& x : v) x = std::uint8_t(rng() % 255 + 1);  // no zero code in the real keys
      int const steps = fa3::transpose_steps(d, block_n);
      REQUIRE(steps == block_n / 16 * (d / 32));
      for (int block = 0; block < 2; ++block) {
        auto const t = tiles_of(v, seqlen_k, d, block_n, block);
        std::vector<std::uint8_t> slot(t.expected.size(), 0);
        std::vector<int> writes(slot.size(), 0);
        for (int warp = 0; warp < fa3::kTransposeWarps; ++warp)
          for (int step = warp; step < steps; step += fa3::kTransposeWarps) {
            INFO("step " << step);
            auto const s = fa3::transpose_step(d, step);
            CHECK(s.group == step / (d / 32));
            CHECK(s.pair == step % (d / 32));
            Rows load_at{}, store_at{};
            for (int lane = 0; lane < 32; ++lane) {
              // The kernel's split offsets are the rows' swizzled offsets.
              load_at[std::size_t(lane)] =
                  fa3::join(fa3::staged_lane_part(d, lane), fa3::staged_step_part(d, block_n, step));
              store_at[std::size_t(lane)] =
                  fa3::join(fa3::vt_lane_part(block_n, lane), fa3::vt_step_part(d, block_n, step));
              CHECK(load_at[std::size_t(lane)] == fa3::staged_v_offset(d, block_n, fa3::ldmatrix_key(s, lane),
                                                                       fa3::ldmatrix_column(s, lane)));
              CHECK(store_at[std::size_t(lane)] ==
                    fa3::vt_slot_offset(d, block_n, fa3::stmatrix_column(s, lane), 16 * s.group));
            }
            CHECK(one_wavefront_per_matrix(load_at));
            CHECK(one_wavefront_per_matrix(store_at));
            auto const r = ldmatrix_trans(t.staged, load_at);
            std::array<std::array<std::uint32_t, 4>, 32> w{};
            for (int lane = 0; lane < 32; ++lane)
              for (int m = 0; m < 4; ++m)
                w[std::size_t(lane)][std::size_t(m)] =
                    prmt(r[std::size_t(lane)][std::size_t(2 * (m >> 1))],
                         r[std::size_t(lane)][std::size_t(2 * (m >> 1) + 1)], fa3::join_selector(lane, m));
            stmatrix(slot, writes, store_at, w);
          }
        INFO("block " << block);
        CHECK(std::count(writes.begin(), writes.end(), 1) == std::ptrdiff_t(writes.size()));
        CHECK(slot == t.expected);
      }
    }
}

TEST_CASE("fa3_sm90's in-kernel V transpose: its config rules and shared bytes", "[kernels][fp8]") {
  // FP8 d128, 2 x 128, 2 stages: the staging ring adds 2 x 128 x 128 codes and 2 x 2 barriers + 8 flag bytes.
  fa3::FwdTunables t{128, 1, 128, 2, 2, 1, 1, 1, 0};
  int const launch_bytes = fa3::shared_bytes(t);
  CHECK(launch_bytes == 1024 + 16384 + 4 * 16384 + 32768 + 8 * 10 + 8);
  t.transpose_v = 1;
  REQUIRE(fa3::violation(t) == nullptr);
  CHECK(fa3::transposes_v_in_kernel(t));
  CHECK(fa3::staged_v_bytes(t) == 2 * 128 * 128);
  CHECK(fa3::staged_v_barrier_bytes(t) == 8 * 4 + 8);
  CHECK(fa3::shared_bytes(t) == launch_bytes + 2 * 16384 + 40);
  t.stages = 3;  // 3 flags: 12 bytes padded to 16
  CHECK(fa3::staged_v_barrier_bytes(t) == 8 * 6 + 16);
  t.stages = 2;
  // The register split: 40 for the producer with 2 consumers (232 each, as 32 would give), 32 with 3.
  CHECK(fa3::producer_registers(2, 1) == 40);
  CHECK(fa3::consumer_registers(2, 1) == 232);
  CHECK(fa3::consumer_registers(2, 0) == 240);
  CHECK(fa3::producer_registers(3, 1) == 32);
  CHECK(fa3::consumer_registers(3, 1) == 160);
  for (int consumers : {2, 3})
    CHECK(fa3::producer_registers(consumers, 1) + consumers * fa3::consumer_registers(consumers, 1) <=
          (1 + consumers) * fa3::entry_registers(consumers));
  // d256 2 x 128 fits with the launch (225 KiB) but not with the staged tiles (289 KiB); 2 x 64 does.
  fa3::FwdTunables d256{256, 1, 128, 2, 2, 1, 0, 1, 0, 0, 1};
  REQUIRE(fa3::violation(d256) != nullptr);
  CHECK(std::string(fa3::violation(d256)).find("227 KiB") != std::string::npos);
  d256.transpose_v = 0;
  CHECK(fa3::violation(d256) == nullptr);
  d256 = {256, 1, 64, 2, 2, 1, 1, 1, 0, 0, 1};
  CHECK(fa3::violation(d256) == nullptr);
  // Only FP8 with V^T has a V transpose; 0 or 1.
  auto rule = [](fa3::FwdTunables x) { return std::string(fa3::violation(x) ? fa3::violation(x) : ""); };
  fa3::FwdTunables bf16{128, 2, 128, 2, 2, 1, 1, 1, 0, 0, 1};
  CHECK(rule(bf16).find("kTransposeV") != std::string::npos);
  fa3::FwdTunables pv_bf16{128, 1, 128, 2, 2, 1, 1, 1, 0, 1, 1};
  CHECK(rule(pv_bf16).find("kTransposeV") != std::string::npos);
  t.transpose_v = 2;
  CHECK(rule(t).find("kTransposeV is 0") != std::string::npos);
}
