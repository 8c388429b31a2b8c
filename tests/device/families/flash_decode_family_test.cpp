#include "device/families/families.hpp"

#include <catch2/catch.hpp>

#include "device/families/registry.hpp"
#include "kernels_src/flash_decode_config.h"

using namespace fl::device;
using fl::common::Precision;

namespace {

Problem decode(int b, int hq, int hkv, int nq, int nk, int d, bool causal = false,
               Precision dtype = Precision::bf16) {
  Problem p;
  p.shape = {b, hq, hkv, nq, nk, d, causal, 0.0};
  p.dtype = dtype;
  return p;
}

}  // namespace

TEST_CASE("flash_decode default configs satisfy the constraints at every decode shape", "[device]") {
  FlashDecodeFamily const f;
  for (int d : {64, 128, 256})
    for (int nq : {1, 2, 4, 8, 16})
      for (int nk : {1, 12, 4096, 32768, 131072})
        for (auto [hq, hkv] : {std::pair{16, 16}, std::pair{32, 8}, std::pair{32, 4}, std::pair{8, 1}})
          for (bool causal : {false, true}) {
            auto const p = decode(1, hq, hkv, nq, nk, d, causal);
            INFO(describe(p) << " " << to_string(f.default_config(p)));
            CHECK_FALSE(f.unsupported(p));
            CHECK_FALSE(f.violates(f.default_config(p), p));
          }
}

TEST_CASE("flash_decode refuses what it cannot run", "[device]") {
  FlashDecodeFamily const f;
  CHECK(f.unsupported(decode(1, 16, 16, 1, 4096, 96)));
  CHECK(f.unsupported(decode(1, 16, 16, 1, 4096, 128, false, Precision::fp8_e4m3)));
  CHECK(f.unsupported(decode(1, 16, 6, 1, 4096, 128)));
  auto const prefill = f.unsupported(decode(1, 16, 16, 4096, 4096, 128));
  REQUIRE(prefill);
  CHECK(prefill->find("n_q up to 128") != std::string::npos);
  auto const rows = f.unsupported(decode(65536, 65536, 65536, 1, 4096, 128));  // 2^32 rows to combine
  REQUIRE(rows);
  CHECK(rows->find("2^31 - 1") != std::string::npos);
  auto bwd = decode(1, 16, 16, 1, 4096, 128);
  bwd.direction = Direction::backward;
  CHECK(f.unsupported(bwd));
}

TEST_CASE("flash_decode's rules are the config header's", "[device]") {
  FlashDecodeFamily const f;
  auto const p = decode(1, 32, 8, 1, 32768, 128);
  auto c = f.default_config(p);
  c["kSplits"] = 0;
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("kSplits") != std::string::npos);
  c = f.default_config(p);
  c["kNWarps"] = 8;
  c["kBlockN"] = 128;  // 8 warps x 2 slots x (K, V) of 32 KiB
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("shared memory") != std::string::npos);
  c = f.default_config(p);
  c["kBlockM"] = 64;
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("registers") != std::string::npos);
}

TEST_CASE("flash_decode's default splits fill the GPU without starving a partial", "[device]") {
  FlashDecodeFamily const f;
  // b1, 8 kv heads, n_q 1, GQA 4: 4 packed rows, one row block, 8 CTAs without splitting; 1024 key blocks
  // of 32. Doubling while 8 x kSplits <= 3 x 132 CTAs: 32 splits x 2 warps = 64 partials of 16 blocks.
  CHECK(f.default_config(decode(1, 32, 8, 1, 32768, 128))["kSplits"] == 32);
  // A short cache: 4 key blocks, every partial keeps two: one split of two warps.
  CHECK(f.default_config(decode(1, 32, 8, 1, 128, 128))["kSplits"] == 1);
  // Enough CTAs already (b 8 x 16 heads x 1 row block = 128): 3 x 132 allows 2 splits, not 4.
  CHECK(f.default_config(decode(8, 16, 16, 16, 32768, 128))["kSplits"] == 2);
}

TEST_CASE("flash_decode launch geometry: the split kernel, then the combine", "[device]") {
  FlashDecodeFamily const f;
  auto const p = decode(1, 32, 8, 1, 32768, 128, true);
  auto const c = f.default_config(p);
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].name_expression == "flash_decode_split<__nv_bfloat16, 128, 16, 32, 2, 32, true>");
  CHECK(steps[0].grid.x == 32);
  CHECK(steps[0].grid.y == 8);  // 8 kv heads x 1 row block (4 packed rows)
  CHECK(steps[0].grid.z == 1);
  CHECK(steps[0].block.x == 64);
  fdec::Tunables const t{128, 2, 16, 32, 2, 32};
  CHECK(steps[0].dynamic_shared_bytes == std::size_t(fdec::shared_bytes(t)));
  CHECK(steps[0].dynamic_shared_bytes == 16 * 256 + 2 * (2 * 2 * 32 * 256));
  CHECK(steps[1].name_expression == "flash_decode_combine<__nv_bfloat16, 128, 64>");
  CHECK(steps[1].grid.x == 32);  // one CTA per row: 32 query heads x 1 row
  CHECK(steps[1].block.x == 64);
  CHECK(steps[1].step == 1);
  auto const scratch = f.scratch(c, p);
  CHECK(scratch.m == sizeof(float) * 64 * 32);
  CHECK(scratch.o == sizeof(float) * 64 * 32 * 128);
  // 16 query heads a group x 16 rows: 256 packed rows, 16 row blocks per kv head.
  auto const wide = decode(2, 32, 2, 16, 4096, 128);
  auto const w = f.launches(f.default_config(wide), wide);
  CHECK(w[0].grid.y == 2 * 16);
  CHECK(w[0].grid.z == 2);
}

TEST_CASE("flash_decode space enumerates only valid configs, the default among them", "[device]") {
  FlashDecodeFamily const f;
  for (int d : {64, 128, 256}) {
    auto const p = decode(1, 32, 8, 4, 32768, d);
    auto const space = enumerate_space(f, p);
    REQUIRE_FALSE(space.empty());
    for (auto const& c : space) CHECK_FALSE(f.violates(c, p));
    CHECK(std::find(space.begin(), space.end(), f.default_config(p)) != space.end());
  }
}

TEST_CASE("flash_decode is registered", "[device]") {
  REQUIRE(find_family("flash_decode"));
  CHECK(family_names().find("flash_decode") != std::string::npos);
}
