// The register maps of fa2_fp8_fwd.cu, checked on the CPU: one warp's S = Q K^T and O = P V computed
// through emulated ldmatrix (plain and .trans), prmt and mma.m16n8k32 whose fragment layouts are
// written from the PTX ISA's tables (not from the kernel), with the lane addresses, the byte swizzle, the
// P packing order and the O column map exactly as the kernel writes them, compared with a plain GEMM.
// A layout mistake anywhere (swizzle, ldmatrix lanes, k permutation, even/odd columns) breaks equality.
#include <catch2/catch.hpp>

#include <cuda_fp8.h>

#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace {

using Regs = std::array<std::array<std::uint32_t, 4>, 32>;  // [lane][register]

// Host copy of fa::fp8_swizzled_offset (kernels_src/fa_fp8.cuh) and fa_copy.cuh's 128-byte-group swizzle.
int swizzled_offset(int chunks, int row, int chunk) {
  if (chunks == 4) return row * 64 + ((chunk ^ ((row >> 1) & 3)) * 16);
  return (row * chunks + ((chunk & ~7) | ((chunk ^ row) & 7))) * 16;
}
// Host copy of fa::fp8_chunk_offset: the in-row offset for a lane whose row is row_mod8 modulo 8.
int chunk_offset(int chunks, int row_mod8, int chunk) {
  if (chunks == 4) return (chunk ^ (row_mod8 >> 1)) * 16;
  return ((chunk & ~7) | ((chunk ^ row_mod8) & 7)) * 16;
}

struct Tile {  // a swizzled shared-memory byte tile of `rows` x `row_bytes`
  int rows, row_bytes;
  std::vector<std::uint8_t> bytes;
  Tile(int r, int rb) : rows(r), row_bytes(rb), bytes(std::size_t(r) * rb) {}
  void put(int row, int col, std::uint8_t v) {
    bytes[std::size_t(swizzled_offset(row_bytes / 16, row, col / 16) + col % 16)] = v;
  }
};

// ldmatrix.m8n8.x4.b16: lane l gives the address of row l % 8 of matrix l / 8 (16 bytes). Without .trans
// lane (g, c) receives row g, b16 elements 2c (low half) and 2c+1; with .trans rows 2c and 2c+1 of b16
// column g.
Regs ldmatrix_x4(Tile const& t, std::array<int, 32> const& addr, bool trans) {
  Regs out{};
  for (int lane = 0; lane < 32; ++lane) {
    int const g = lane / 4, c = lane % 4;
    for (int m = 0; m < 4; ++m) {
      auto b16 = [&](int row, int elem) {
        int const a = addr[std::size_t(8 * m + row)] + 2 * elem;
        return std::uint32_t(t.bytes[std::size_t(a)]) | (std::uint32_t(t.bytes[std::size_t(a + 1)]) << 8);
      };
      std::uint32_t const lo = trans ? b16(2 * c, g) : b16(g, 2 * c);
      std::uint32_t const hi = trans ? b16(2 * c + 1, g) : b16(g, 2 * c + 1);
      out[std::size_t(lane)][std::size_t(m)] = lo | (hi << 16);
    }
  }
  return out;
}

std::uint32_t prmt(std::uint32_t a, std::uint32_t b, std::uint32_t sel) {
  std::uint64_t const pair = (std::uint64_t(b) << 32) | a;
  std::uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= std::uint32_t((pair >> (8 * ((sel >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
}

float decode(std::uint8_t code) {
  __nv_fp8_e4m3 v;
  v.__x = code;
  return float(v);
}
std::uint8_t encode(float x) {
  return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
}
std::uint8_t byte_of(std::uint32_t r, int j) {
  return std::uint8_t((r >> (8 * j)) & 0xFF);
}

// mma.m16n8k32 .e4m3, PTX ISA fragment tables: A element e = 4i + j of register i, byte j:
// row g (e < 4 or 8 <= e < 12) else g + 8, col 4c + (e & 3) (+16 for e >= 8); B element e: k = 4c + (e & 3)
// (+16 for e >= 4), n = g; C register i: row g + 8 (i / 2), col 2c + i % 2.
void mma(std::array<std::array<float, 4>, 32>& d, Regs const& a,
         std::array<std::array<std::uint32_t, 2>, 32> const& b) {
  float A[16][32] = {}, B[32][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    int const g = lane / 4, c = lane % 4;
    for (int e = 0; e < 16; ++e) {
      int const row = (e < 4 || (e >= 8 && e < 12)) ? g : g + 8;
      int const col = 4 * c + (e & 3) + (e >= 8 ? 16 : 0);
      A[row][col] = decode(byte_of(a[std::size_t(lane)][std::size_t(e / 4)], e % 4));
    }
    for (int e = 0; e < 8; ++e)
      B[4 * c + (e & 3) + (e >= 4 ? 16 : 0)][g] =
          decode(byte_of(b[std::size_t(lane)][std::size_t(e / 4)], e % 4));
  }
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      int const row = lane / 4 + 8 * (i / 2), col = 2 * (lane % 4) + i % 2;
      float acc = 0;
      for (int k = 0; k < 32; ++k) acc += A[row][k] * B[k][col];
      d[std::size_t(lane)][std::size_t(i)] += acc;
    }
}

// Small integers are exact in e4m3 and their dot products exact in float: equality is exact.
std::vector<std::vector<float>> random_matrix(int rows, int cols, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(-6, 6);
  std::vector<std::vector<float>> m{std::size_t(rows), std::vector<float>(std::size_t(cols))};
  for (auto& r : m)
    for (auto& x : r) x = float(dist(rng));
  return m;
}

void check_warp_products(int head_dim) {
  std::mt19937 rng{unsigned(head_dim)};
  int const chunks = head_dim / 16;
  constexpr int kRows = 16, kKeys = 32;
  auto const q = random_matrix(kRows, head_dim, rng);
  auto const k = random_matrix(kKeys, head_dim, rng);
  auto const v = random_matrix(kKeys, head_dim, rng);
  auto const p = random_matrix(kRows, kKeys, rng);
  Tile tq(kRows, head_dim), tk(kKeys, head_dim), tv(kKeys, head_dim);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < head_dim; ++c) tq.put(r, c, encode(q[std::size_t(r)][std::size_t(c)]));
  for (int r = 0; r < kKeys; ++r)
    for (int c = 0; c < head_dim; ++c) {
      tk.put(r, c, encode(k[std::size_t(r)][std::size_t(c)]));
      tv.put(r, c, encode(v[std::size_t(r)][std::size_t(c)]));
    }

  // S = Q K^T as the kernel's QK^T loop (kMT = 1, kNT = 4: keys 0..31).
  std::array<std::array<std::array<float, 4>, 32>, 4> s{};
  for (int kk = 0; kk < head_dim / 32; ++kk) {
    std::array<int, 32> qa{}, ka{};
    for (int lane = 0; lane < 32; ++lane) {
      int const row_a = lane % 8 + 8 * ((lane / 8) % 2), row_b = lane % 8 + 8 * (lane / 16);
      qa[std::size_t(lane)] = row_a * head_dim + chunk_offset(chunks, lane % 8, 2 * kk + lane / 16);
      ka[std::size_t(lane)] = row_b * head_dim + chunk_offset(chunks, lane % 8, 2 * kk + (lane / 8) % 2);
    }
    Regs const a = ldmatrix_x4(tq, qa, false);
    for (int np = 0; np < 2; ++np) {
      std::array<int, 32> kn{};
      for (int lane = 0; lane < 32; ++lane)
        kn[std::size_t(lane)] = ka[std::size_t(lane)] + np * 16 * head_dim;
      Regs const b = ldmatrix_x4(tk, kn, false);
      std::array<std::array<std::uint32_t, 2>, 32> b01{}, b23{};
      for (int lane = 0; lane < 32; ++lane) {
        b01[std::size_t(lane)] = {b[std::size_t(lane)][0], b[std::size_t(lane)][1]};
        b23[std::size_t(lane)] = {b[std::size_t(lane)][2], b[std::size_t(lane)][3]};
      }
      mma(s[std::size_t(2 * np)], a, b01);
      mma(s[std::size_t(2 * np + 1)], a, b23);
    }
  }
  for (int lane = 0; lane < 32; ++lane)
    for (int nt = 0; nt < 4; ++nt)
      for (int e = 0; e < 4; ++e) {
        int const row = lane / 4 + 8 * (e / 2), key = 8 * nt + 2 * (lane % 4) + e % 2;
        float ref = 0;
        for (int d = 0; d < head_dim; ++d)
          ref += q[std::size_t(row)][std::size_t(d)] * k[std::size_t(key)][std::size_t(d)];
        INFO("S lane " << lane << " tile " << nt << " element " << e);
        REQUIRE(s[std::size_t(nt)][std::size_t(lane)][std::size_t(e)] == ref);
      }

  // P in C-fragment layout (what the softmax leaves in s), packed as the kernel packs it.
  Regs pa{};
  for (int lane = 0; lane < 32; ++lane) {
    auto pv = [&](int nt, int e) {
      int const row = lane / 4 + 8 * (e / 2), key = 8 * nt + 2 * (lane % 4) + e % 2;
      return encode(p[std::size_t(row)][std::size_t(key)]);
    };
    auto pack = [](std::uint8_t x0, std::uint8_t x1, std::uint8_t x2, std::uint8_t x3) {
      return std::uint32_t(x0) | (std::uint32_t(x1) << 8) | (std::uint32_t(x2) << 16) |
             (std::uint32_t(x3) << 24);
    };
    pa[std::size_t(lane)] = {
        pack(pv(0, 0), pv(0, 1), pv(1, 0), pv(1, 1)), pack(pv(0, 2), pv(0, 3), pv(1, 2), pv(1, 3)),
        pack(pv(2, 0), pv(2, 1), pv(3, 0), pv(3, 1)), pack(pv(2, 2), pv(2, 3), pv(3, 2), pv(3, 3))};
  }
  // O = P V: ldmatrix.trans over the 32 keys at chunk dp, prmt into even / odd column B registers.
  std::vector<std::array<std::array<float, 4>, 32>> o(std::size_t(head_dim / 8));
  for (int dp = 0; dp < head_dim / 16; ++dp) {
    std::array<int, 32> va{};
    for (int lane = 0; lane < 32; ++lane)
      va[std::size_t(lane)] = lane * head_dim + chunk_offset(chunks, lane % 8, dp);
    Regs const r = ldmatrix_x4(tv, va, true);
    std::array<std::array<std::uint32_t, 2>, 32> even{}, odd{};
    for (int lane = 0; lane < 32; ++lane) {
      auto const& x = r[std::size_t(lane)];
      even[std::size_t(lane)] = {prmt(x[0], x[1], 0x6420), prmt(x[2], x[3], 0x6420)};
      odd[std::size_t(lane)] = {prmt(x[0], x[1], 0x7531), prmt(x[2], x[3], 0x7531)};
    }
    mma(o[std::size_t(2 * dp)], pa, even);
    mma(o[std::size_t(2 * dp + 1)], pa, odd);
  }
  // The kernel's store: row g + 8h, columns 16 dp + 4c + {0, 1, 2, 3} =
  // {even[2h], odd[2h], even[2h+1], odd[2h+1]}.
  for (int lane = 0; lane < 32; ++lane)
    for (int h = 0; h < 2; ++h)
      for (int dp = 0; dp < head_dim / 16; ++dp) {
        auto const& ev = o[std::size_t(2 * dp)][std::size_t(lane)];
        auto const& od = o[std::size_t(2 * dp + 1)][std::size_t(lane)];
        float const got[4] = {ev[std::size_t(2 * h)], od[std::size_t(2 * h)], ev[std::size_t(2 * h + 1)],
                              od[std::size_t(2 * h + 1)]};
        int const row = lane / 4 + 8 * h;
        for (int j = 0; j < 4; ++j) {
          int const col = 16 * dp + 4 * (lane % 4) + j;
          float ref = 0;
          for (int key = 0; key < kKeys; ++key)
            ref += p[std::size_t(row)][std::size_t(key)] * v[std::size_t(key)][std::size_t(col)];
          INFO("O lane " << lane << " row " << row << " col " << col);
          REQUIRE(got[j] == ref);
        }
      }
}

}  // namespace

TEST_CASE("fa2_fp8 fragment maps: S = Q K^T and O = P V of one warp equal a plain GEMM", "[kernels][fp8]") {
  for (int d : {64, 128, 256}) {
    INFO("head dim " << d);
    check_warp_products(d);
  }
}

TEST_CASE("fa2_fp8 byte swizzle: a bijection, and every ldmatrix 8x8 matrix is conflict-free",
          "[kernels][fp8]") {
  for (int d : {64, 128, 256}) {
    int const chunks = d / 16;
    constexpr int kRows = 64;
    std::set<int> seen;
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < chunks; ++c) {
        int const off = swizzled_offset(chunks, r, c);
        REQUIRE(off % 16 == 0);
        REQUIRE(off < kRows * d);
        seen.insert(off);
        // fp8_chunk_offset reproduces the in-row offset from the row's low 3 bits.
        REQUIRE(off - r * d == chunk_offset(chunks, r % 8, c));
      }
    REQUIRE(seen.size() == std::size_t(kRows * chunks));
    // 8 consecutive rows (base a multiple of 8) at one logical chunk: 8 distinct 16-byte bank groups.
    for (int base = 0; base < kRows; base += 8)
      for (int c = 0; c < chunks; ++c) {
        std::set<int> groups;
        for (int r = base; r < base + 8; ++r) groups.insert((swizzled_offset(chunks, r, c) / 16) % 8);
        INFO("d " << d << " rows " << base << " chunk " << c);
        REQUIRE(groups.size() == 8);
      }
  }
}
