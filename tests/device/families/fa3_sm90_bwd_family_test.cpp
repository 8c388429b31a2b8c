#include "device/families/families.hpp"

#include <catch2/catch.hpp>
#include <vector>

#include "device/families/registry.hpp"
#include "kernels_src/fa3_sm90_bwd_config.h"

using namespace fl::device;
using fl::common::Precision;

namespace {
Problem bwd(int n, int d, bool causal, Precision dtype = Precision::bf16) {
  return headline_problem(n, d, causal, dtype, Direction::backward);
}
}  // namespace

TEST_CASE("fa3_sm90_bwd defaults satisfy the constraints of every supported problem", "[device]") {
  Fa3Sm90BwdFamily const f;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto dtype : {Precision::fp16, Precision::bf16}) {
        auto const p = bwd(2048, d, causal, dtype);
        CHECK_FALSE(f.unsupported(p));
        INFO(to_string(f.default_config(p)));
        CHECK_FALSE(f.violates(f.default_config(p), p));
        CHECK_FALSE(f.violates(f.reproducible_config(p), p));
        CHECK(value_or(f.reproducible_config(p), "kDqMode", -1) == fa3::kDqDeterministic);
      }
}

TEST_CASE(
    "fa3_sm90_bwd's defaults add dQ by TMA bulk reduce-add at d128 and d64 full, by REDs at d64 causal and "
    "d256",
    "[device]") {
  Fa3Sm90BwdFamily const f;
  CHECK(value_or(f.default_config(bwd(2048, 64, true)), "kDqMode", -1) == fa3::kDqAtomic);
  CHECK(value_or(f.default_config(bwd(2048, 64, false)), "kDqMode", -1) == fa3::kDqBulk);
  CHECK(value_or(f.default_config(bwd(2048, 128, false)), "kDqMode", -1) == fa3::kDqBulk);
  CHECK(value_or(f.default_config(bwd(2048, 256, false)), "kDqMode", -1) == fa3::kDqAtomic);
  Config bulk_d256 = f.default_config(bwd(2048, 256, false));
  bulk_d256["kDqMode"] = fa3::kDqBulk;
  CHECK(f.violates(bulk_d256, bwd(2048, 256, false)) ==
        std::optional<std::string>("shared memory over 227 KiB"));
}

TEST_CASE("fa3_sm90_bwd refuses what it cannot run", "[device]") {
  Fa3Sm90BwdFamily const f;
  CHECK(f.unsupported(bwd(2048, 96, false)));
  CHECK(f.unsupported(bwd(2048, 64, false, Precision::fp8_e4m3)));
  CHECK(f.unsupported(headline_problem(2048, 64, false, Precision::bf16, Direction::forward)));
}

TEST_CASE("fa3_sm90_bwd's rules are the config header's", "[device]") {
  Fa3Sm90BwdFamily const f;
  auto const p = bwd(2048, 128, false);
  auto c = f.default_config(p);
  c["kBlockM"] = 128;  // dK + dV (128) + S^T + dP^T (128) floats
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("registers") != std::string::npos);
  c = f.default_config(p);
  c["kConsumers"] = 1;  // two 64-key groups, one warpgroup
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("key group") != std::string::npos);
  auto const p64 = bwd(2048, 64, false);
  c = f.default_config(p64);
  c["kBlockM"] = 64;  // one dQ item (64 x 64) for two warpgroups
  REQUIRE(f.violates(c, p64));
  CHECK(f.violates(c, p64)->find("dQ items") != std::string::npos);
  c = f.default_config(p);
  c["kDqMode"] = 3;
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("kDqMode") != std::string::npos);
}

TEST_CASE("fa3_sm90_bwd shared memory: the tiles, two dS^T buffers, the stats and barriers", "[device]") {
  // d256 64 x 64, two stages: K, V 32 KiB each, 2 x (Q, dO) 32 KiB each, 2 x 8 KiB dS^T, 2 x 512 B stats.
  fa3::BwdTunables const t{256, 2, 64, 64, 2, 2, 0};
  CHECK(fa3::bwd_shared_bytes(t) == 1024 + 2 * 32768 + 4 * 32768 + 2 * 8192 + 2 * 512 + 8 * 5);
  CHECK(fa3::bwd_d_split(t) == 2);
  CHECK(fa3::bwd_dkv_columns(t) == 128);
  CHECK(fa3::bwd_dq_items_per_consumer(t) == 2);
  fa3::BwdTunables bulk = t;  // + two 64 x 288-byte dQ staging tiles: over 227 KiB with two stages
  bulk.dq_mode = fa3::kDqBulk;
  CHECK(fa3::bwd_shared_bytes(bulk) == fa3::bwd_shared_bytes(t) + 2 * 64 * 288);
  CHECK(fa3::bwd_violation(bulk) != nullptr);
  bulk.stages = 1;
  CHECK(fa3::bwd_violation(bulk) == nullptr);
  fa3::BwdTunables big = t;
  big.block_n = 128;  // the same head dim over two key groups: dK + dV 256 floats per thread
  CHECK(fa3::bwd_violation(big) != nullptr);
}

TEST_CASE("fa3_sm90_bwd space enumerates only valid configs, the default among them", "[device]") {
  Fa3Sm90BwdFamily const f;
  for (int d : {64, 128, 256}) {
    auto const p = bwd(4096, d, true);
    auto const space = enumerate_space(f, p);
    REQUIRE_FALSE(space.empty());
    for (auto const& c : space) CHECK_FALSE(f.violates(c, p));
    CHECK(std::find(space.begin(), space.end(), f.default_config(p)) != space.end());
    CHECK(std::find(space.begin(), space.end(), f.reproducible_config(p)) != space.end());
  }
}

TEST_CASE("fa3_sm90_bwd launches: preprocess, one CTA per key block and key head, convert", "[device]") {
  Fa3Sm90BwdFamily const f;
  auto p = bwd(4096, 128, false);
  p.shape.seqlen_k = 1000;
  p.shape.heads_kv = 4;
  auto c = f.default_config(p);
  c["kDqMode"] = fa3::kDqAtomic;  // the row-major accumulator of the REDs
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].name_expression == "fa_bwd_preprocess<__nv_bfloat16, 128, 4, true>");
  CHECK_FALSE(steps[0].takes_tensor_maps);
  CHECK(steps[1].name_expression == "fa3_sm90_bwd<__nv_bfloat16, 128, 64, 128, 2, 2, 0, false>");
  CHECK(steps[1].takes_tensor_maps);
  CHECK(steps[1].grid.x == 8);  // ceil(1000 / 128)
  CHECK(steps[1].grid.y == 4);
  CHECK(steps[1].grid.z == unsigned(p.shape.batch));
  CHECK(steps[1].block.x == 384);
  CHECK(steps[2].name_expression == "fa_bwd_dq_convert<__nv_bfloat16, 128>");
  CHECK_FALSE(steps[2].takes_tensor_maps);
  auto const rows = std::size_t(p.shape.batch) * p.shape.heads_q * p.shape.seqlen_q;
  CHECK(f.scratch(c, p).dq_accum == 4 * rows * 128);
  CHECK(f.scratch(c, p).dq_semaphore == 0);
  CHECK(f.scratch(f.reproducible_config(p), p).dq_semaphore == 4 * rows);
}

TEST_CASE("fa3_sm90_bwd's TMA bulk dQ adds into a tiled accumulator that its preprocess and convert share",
          "[device]") {
  Fa3Sm90BwdFamily const f;
  auto p = bwd(4096, 128, false);
  p.shape.seqlen_q = 1000;  // not a multiple of the tile's 64 rows: the last tile is padded
  auto c = f.default_config(p);
  c["kDqMode"] = fa3::kDqBulk;
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].name_expression == "fa_bwd_preprocess<__nv_bfloat16, 128, 4, true, fa3::BwdDqTiles>");
  CHECK(steps[2].name_expression == "fa_bwd_dq_convert<__nv_bfloat16, 128, fa3::BwdDqTiles>");
  // 16 row tiles (1000 rows padded to 1024) x 2 column chunks of 64 x 72 floats per (batch, head).
  CHECK(f.scratch(c, p).dq_accum == 4 * std::size_t(p.shape.batch) * p.shape.heads_q * 16 * 2 * 64 * 72);
  // Every element of two heads has its own place inside its head's part, and an item's 64 rows x 64
  // columns are one contiguous tile (the single bulk copy's destination).
  constexpr int n = 130, d = 128;
  std::vector<int> seen(2 * fa3::BwdDqTiles::head_floats(n, d), 0);
  for (long long bh = 0; bh < 2; ++bh)
    for (int row = 0; row < n; ++row)
      for (int col = 0; col < d; ++col) {
        auto const at = fa3::BwdDqTiles::offset<d>(bh, n, row, col);
        REQUIRE(at >= bh * fa3::BwdDqTiles::head_floats(n, d));
        REQUIRE(at < (bh + 1) * fa3::BwdDqTiles::head_floats(n, d));
        REQUIRE(++seen[std::size_t(at)] == 1);
        auto const tile_start = fa3::BwdDqTiles::offset<d>(bh, n, row / 64 * 64, col / 64 * 64);
        REQUIRE(at - tile_start == (row % 64) * 72 + col % 64);
      }
}

TEST_CASE("fa3_sm90_bwd is registered as fa3_sm90's backward", "[device]") {
  REQUIRE(find_family("fa3_sm90_bwd"));
  REQUIRE(find_family("fa3_sm90"));  // fa-mutate pairs <family> with <family>_bwd
}
