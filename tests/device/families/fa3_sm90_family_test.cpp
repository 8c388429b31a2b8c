#include "device/families/families.hpp"

#include <catch2/catch.hpp>

#include "device/families/registry.hpp"
#include "kernels_src/fa3_sm90_config.h"

using namespace fl::device;
using fl::common::Precision;

namespace {

// FA3's 128 x 128 FP8 tile with ping-pong and O through P's buffer (the FP8 default before 2026-12-04): the
// tests of the V^T launch and of the in-kernel transpose count its bytes and names.
Config fp8_ping_pong_config(Family const& f, Problem const& p) {
  auto c = f.default_config(p);
  c["kBlockN"] = 128;
  c["kConsumers"] = 2;
  c["kPingPong"] = 1;
  c["kIntraWgOverlap"] = 1;
  c["kSeparateO"] = 0;
  c["kTransposeV"] = 0;
  return c;
}

}  // namespace

TEST_CASE("fa3_sm90 default configs satisfy the constraints of every supported problem", "[device]") {
  Fa3Sm90Family const f;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto dtype : {Precision::fp16, Precision::bf16, Precision::fp8_e4m3, Precision::fp8_e5m2}) {
        auto const p = headline_problem(2048, d, causal, dtype, Direction::forward);
        CHECK_FALSE(f.unsupported(p));
        INFO(to_string(f.default_config(p)));
        CHECK_FALSE(f.violates(f.default_config(p), p));
      }
}

TEST_CASE("fa3_sm90 FP8 defaults are the H200 grid's best single config per head dim and mask",
          "[device][fp8]") {
  Fa3Sm90Family const f;
  auto const fp8_default = [&](int d, bool causal) {
    return f.default_config(headline_problem(4096, d, causal, Precision::fp8_e4m3, Direction::forward));
  };
  for (int d : {64, 128, 256})
    for (bool causal : {false, true}) {
      auto const c = fp8_default(d, causal);
      INFO("d" << d << (causal ? " causal " : " full ") << to_string(c));
      CHECK(c.at("kPingPong") == 0);
      CHECK(c.at("kSeparateO") == 1);
      CHECK(c.at("kConsumers") == (d == 64 ? 3 : 2));
      CHECK(c.at("kPersistent") == (causal ? fa3::kDynamicTiles : fa3::kStaticTiles));
      CHECK(c.at("kTransposeV") == (causal && d != 256 ? 1 : 0));
    }
  CHECK(fp8_default(128, false).at("kBlockN") == 256);
  CHECK(fp8_default(128, false).at("kIntraWgOverlap") == 0);
  CHECK(fp8_default(128, true).at("kBlockN") == 128);
  CHECK(fp8_default(128, true).at("kIntraWgOverlap") == 1);
  CHECK(fp8_default(256, true).at("kIntraWgOverlap") == 0);
  // A V given transposed is read as it is; bf16 P V keeps its own tiles (not timed yet).
  auto p = headline_problem(4096, 128, true, Precision::fp8_e4m3, Direction::forward);
  p.fp8.pretransposed_v = true;
  CHECK(f.default_config(p).at("kTransposeV") == 0);
  CHECK_FALSE(f.violates(f.default_config(p), p));
  p.fp8.pretransposed_v = false;
  p.fp8.bf16_pv = true;
  CHECK(f.default_config(p).at("kPersistent") == fa3::kOneCtaPerTile);
  CHECK(f.default_config(p).at("kPingPong") == 1);
  // Per-block scaling halves the key block until it divides the descale block.
  p.fp8.bf16_pv = false;
  p.fp8.scaling = fl::common::Fp8Scaling::per_block;
  p.fp8.block_rows = 64;
  CHECK(f.default_config(p).at("kBlockN") == 64);
  CHECK_FALSE(f.violates(f.default_config(p), p));
}

TEST_CASE("fa3_sm90 refuses what it cannot run", "[device]") {
  Fa3Sm90Family const f;
  CHECK(f.unsupported(headline_problem(2048, 96, false, Precision::bf16, Direction::forward)));
  CHECK(f.unsupported(headline_problem(2048, 64, false, Precision::fp32, Direction::forward)));
  CHECK(f.unsupported(headline_problem(2048, 64, false, Precision::bf16, Direction::backward)));
}

TEST_CASE("fa3_sm90's rules are the config header's", "[device]") {
  Fa3Sm90Family const f;
  auto const p = headline_problem(2048, 128, false, Precision::bf16, Direction::forward);
  auto c = f.default_config(p);
  c["kPingPong"] = 1;
  c["kConsumers"] = 1;
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("ping-pong") != std::string::npos);
  c = f.default_config(p);
  c["kBlockN"] = 224;  // d128: O 64 + S 112 + P 56 registers exceed 240 - slack
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("registers") != std::string::npos);
  c = f.default_config(p);
  c["kStages"] = 3;  // 32 KiB Q + 6 x 44 KiB of K/V slots
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("shared memory") != std::string::npos);
}

TEST_CASE("fa3_sm90 space enumerates only valid configs, the default among them", "[device]") {
  Fa3Sm90Family const f;
  for (int d : {64, 128, 256}) {
    auto const p = headline_problem(4096, d, true, Precision::bf16, Direction::forward);
    auto const space = enumerate_space(f, p);
    REQUIRE_FALSE(space.empty());
    for (auto const& c : space) CHECK_FALSE(f.violates(c, p));
    CHECK(std::find(space.begin(), space.end(), f.default_config(p)) != space.end());
  }
}

TEST_CASE("fa3_sm90 launch geometry: one CTA per tile, or a persistent grid", "[device]") {
  Fa3Sm90Family const f;
  auto p = headline_problem(4096, 128, false, Precision::bf16, Direction::forward);
  p.shape.seqlen_q = 1000;
  auto c = f.default_config(p);
  auto steps = f.launches(c, p);
  REQUIRE(steps.size() == 1);
  // 128-row tiles: ceil(1000 / 128) = 8 per (batch, head); the runner caps a persistent grid at the SMs.
  CHECK(steps[0].grid.x == unsigned(8 * p.shape.heads_q * p.shape.batch));
  CHECK(steps[0].grid.y == 1);
  CHECK(steps[0].persistent);  // full masks: persistent; causal ones launch a CTA per tile
  CHECK(steps[0].block.x == 384);
  fa3::FwdTunables const t{128, 2, 176, 2, 2, 1, 1, 1, 0};
  CHECK(steps[0].dynamic_shared_bytes == std::size_t(fa3::shared_bytes(t)));
  // alignment slack, Q, 2 stages of K and V, 10 barriers and the dynamic scheduler's tile slot
  CHECK(steps[0].dynamic_shared_bytes == 1024 + 128 * 256 + 4 * 176 * 256 + 8 * 10 + 8);
  CHECK(steps[0].name_expression == "fa3_sm90_fwd<__nv_bfloat16, 128, 176, 2, 2, 1, 1, 1, false, false>");
  CHECK(f.scratch(c, p).total() == 0);
  c["kPersistent"] = 0;
  CHECK_FALSE(f.launches(c, p)[0].persistent);
  // The dynamic scheduler: a persistent grid, and its two counters in the scratch.
  c["kPersistent"] = 2;
  REQUIRE_FALSE(f.violates(c, p));
  CHECK(f.launches(c, p)[0].persistent);
  CHECK(f.scratch(c, p).tile_counter == 2 * sizeof(int));
  CHECK(f.scratch(c, p).total() == 2 * sizeof(int));
  c["kPersistent"] = 3;
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("kPersistent") != std::string::npos);
}

TEST_CASE("fa3_sm90 kSeparateO: O in a tile of its own, named by a trailing template argument", "[device]") {
  Fa3Sm90Family const f;
  auto const p = headline_problem(4096, 128, true, Precision::bf16, Direction::forward);
  auto c = f.default_config(p);
  REQUIRE(c.at("kSeparateO") == 0);
  CHECK(f.name_expressions(c, p).front() ==
        "fa3_sm90_fwd<__nv_bfloat16, 128, 128, 2, 2, 1, 1, 2, true, false>");  // the kernel's default: 0
  c["kSeparateO"] = 1;
  REQUIRE_FALSE(f.violates(c, p));
  CHECK(f.name_expressions(c, p).front() ==
        "fa3_sm90_fwd<__nv_bfloat16, 128, 128, 2, 2, 1, 1, 2, true, false, 1>");
  // alignment slack, Q, 2 stages of K and V, O (128 rows x 128 bf16), 10 barriers and the tile slot
  CHECK(f.launches(c, p)[0].dynamic_shared_bytes == 1024 + 32768 + 4 * 32768 + 32768 + 8 * 10 + 8);
  c["kBlockN"] = 176;  // 1024 + 32768 + 4 * 45056 + 32768 > 227 KiB
  CHECK(f.violates(c, p)->find("227 KiB") != std::string::npos);
  c["kBlockN"] = 128;
  c["kSeparateO"] = 2;
  CHECK(f.violates(c, p)->find("kSeparateO") != std::string::npos);
}

TEST_CASE("fa3_sm90 is registered", "[device]") {
  REQUIRE(find_family("fa3_sm90"));
  CHECK(family_names().find("fa3_sm90") != std::string::npos);
}

TEST_CASE("fa3_sm90 FP8: V^T transposed first into scratch padded to 128 keys, O staged apart", "[device]") {
  Fa3Sm90Family const f;
  auto p = headline_problem(4096, 128, false, Precision::fp8_e4m3, Direction::forward);
  p.shape.seqlen_k = 1000;  // 1024 padded keys: 16 transpose CTAs of 64 keys
  auto const c = fp8_ping_pong_config(f, p);
  REQUIRE_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].name_expression == "fa3_sm90_transpose_v<128>");
  CHECK(steps[0].grid.x == 16);
  CHECK(steps[0].grid.y == unsigned(p.shape.heads_kv));
  CHECK(steps[0].grid.z == unsigned(p.shape.batch));
  CHECK(steps[1].name_expression == "fa3_sm90_fwd<__nv_fp8_e4m3, 128, 128, 2, 2, 1, 1, 1, false, false>");
  CHECK(f.scratch(c, p).v_transposed == std::size_t(p.shape.batch) * p.shape.heads_kv * 128 * 1024);
  // Q 128 x 128 bytes, 2 x 2 slots of 128 x 128 bytes, O staged in 128 x 128 bf16, barriers.
  CHECK(steps[1].dynamic_shared_bytes == 1024 + 16384 + 4 * 16384 + 32768 + 8 * 10 + 8);  // + the tile slot
  auto const names = f.name_expressions(c, p);
  CHECK(std::find(names.begin(), names.end(), "fa3_sm90_transpose_v<128>") != names.end());
}

TEST_CASE("fa3_sm90 FP8 key blocks and per-block scaling", "[device]") {
  Fa3Sm90Family const f;
  auto p = headline_problem(4096, 128, false, Precision::fp8_e5m2, Direction::forward);
  auto c = f.default_config(p);
  c["kBlockN"] = 96;  // a V^T row of 96 bytes is no swizzle span
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("FP8 kBlockN") != std::string::npos);
  p.fp8.scaling = fl::common::Fp8Scaling::per_block;
  p.fp8.block_rows = 64;  // K and V factors every 64 keys: 128-key blocks would mix two
  c = f.default_config(p);
  CHECK(c.at("kBlockN") == 64);
  CHECK_FALSE(f.violates(c, p));
  CHECK(f.name_expressions(c, p).front().find(", false, true") != std::string::npos);  // full, per block
  c["kBlockN"] = 128;
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("multiple of kBlockN") != std::string::npos);
  for (auto const& config : enumerate_space(f, p)) CHECK(config.at("kBlockN") == 64);
}

TEST_CASE("fa3_sm90 FP8 with bf16 P.V: V in bf16 through its own map, no transpose, kPvBf16 named last",
          "[device][fp8]") {
  Fa3Sm90Family const f;
  auto p = headline_problem(4096, 128, false, Precision::fp8_e4m3, Direction::forward);
  p.fp8.bf16_pv = true;
  REQUIRE_FALSE(f.unsupported(p));
  auto const c = f.default_config(p);
  REQUIRE_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 1);  // no V^T launch
  CHECK(steps[0].name_expression ==
        "fa3_sm90_fwd<__nv_fp8_e4m3, 128, 128, 2, 2, 1, 1, 1, false, false, 0, 1>");
  CHECK(f.name_expressions(c, p).size() == 1);
  CHECK(f.scratch(c, p).v_transposed == 0);
  // Q 128 x 128 bytes, 2 K slots of 128 x 128 bytes, 2 V slots of 128 x 128 bf16, O 128 x 128 bf16, barriers.
  CHECK(steps[0].dynamic_shared_bytes == 1024 + 16384 + 2 * 16384 + 2 * 32768 + 32768 + 8 * 10 + 8);
  fa::AttentionParams params{};
  auto const maps = f.tensor_maps(c, p, params);
  REQUIRE(maps.size() == 4);
  CHECK(maps[1].view.element == fl::runtime::TensorElement::byte);  // K: FP8 codes
  CHECK(maps[2].view.element == fl::runtime::TensorElement::bf16);  // V: rows of D, as the 16-bit family
  CHECK(maps[2].view.rows == std::uint64_t(p.shape.seqlen_k));
  CHECK(maps[2].box_rows == 128u);
  CHECK(maps[2].box_columns == 64u);
  // The config header's rules: P (bf16) and V's tiles are twice FP8's.
  fa3::FwdTunables t{128, 1, 128, 2, 2, 1, 1, 1, 0, 1};
  CHECK(fa3::violation(t) == nullptr);
  CHECK(fa3::accumulator_registers(t) == 64 + 64 + 32);
  t.head_dim = 256;  // 2 x 128 at d256: 288 KiB
  CHECK(fa3::violation(t) != nullptr);
  t.element_bytes = 2;
  t.head_dim = 128;
  CHECK(std::string(fa3::violation(t)).find("kPvBf16") != std::string::npos);  // FP8's option only
  // Defaults at every head dim and mask satisfy the rules; device quantisation writes FP8 V: refused.
  for (int d : {64, 128, 256})
    for (bool causal : {false, true}) {
      auto q = headline_problem(2048, d, causal, Precision::fp8_e5m2, Direction::forward);
      q.fp8.bf16_pv = true;
      INFO(describe(q) << " " << to_string(f.default_config(q)));
      CHECK_FALSE(f.violates(f.default_config(q), q));
    }
  p.fp8.on_device = true;
  REQUIRE(f.unsupported(p));
  CHECK(f.unsupported(p)->find("--fp8-quantize host") != std::string::npos);
}

TEST_CASE("fa3_sm90 FP8 kTransposeV: V^T made in the kernel, no transpose launch, row-major V's map",
          "[device][fp8]") {
  Fa3Sm90Family const f;
  auto p = headline_problem(4096, 128, false, Precision::fp8_e4m3, Direction::forward);
  p.shape.seqlen_k = 1000;
  auto c = fp8_ping_pong_config(f, p);
  c["kTransposeV"] = 1;
  REQUIRE_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 1);  // no fa3_sm90_transpose_v
  CHECK(steps[0].name_expression ==
        "fa3_sm90_fwd<__nv_fp8_e4m3, 128, 128, 2, 2, 1, 1, 1, false, false, 0, 0, 1>");
  CHECK(f.name_expressions(c, p).size() == 1);
  CHECK(f.scratch(c, p).v_transposed == 0);
  // The launch's bytes plus 2 staged V tiles of 128 x 128 codes, their 4 barriers and 2 flags (8 bytes).
  CHECK(steps[0].dynamic_shared_bytes ==
        1024 + 16384 + 4 * 16384 + 32768 + 8 * 10 + 8 + 2 * 16384 + 8 * 4 + 8);
  fa::AttentionParams params{};
  params.v = reinterpret_cast<void*>(0x500000);
  auto const maps = f.tensor_maps(c, p, params);
  REQUIRE(maps.size() == 4);
  // V as it is, (B, H_kv, N_k, D) codes, in K's boxes: kBlockN keys x 128 bytes; rows past N_k zero-filled.
  CHECK(maps[2].view.element == fl::runtime::TensorElement::byte);
  CHECK(maps[2].view.rows == std::uint64_t(p.shape.seqlen_k));
  CHECK(maps[2].view.head_dim == std::uint64_t(p.shape.head_dim));
  CHECK(maps[2].view.base == reinterpret_cast<CUdeviceptr>(params.v));
  CHECK(maps[2].box_rows == 128u);
  CHECK(maps[2].box_columns == 128u);
  CHECK(maps[2].box_rows == maps[1].box_rows);
  CHECK(maps[2].box_columns == maps[1].box_columns);
  // d64: 64-byte rows, one 64-byte box per key block.
  auto d64 = headline_problem(4096, 64, true, Precision::fp8_e5m2, Direction::forward);
  auto c64 = f.default_config(d64);
  c64["kTransposeV"] = 1;
  REQUIRE_FALSE(f.violates(c64, d64));
  CHECK(f.tensor_maps(c64, d64, params)[2].box_columns == 64u);
  // d256: the default 2 x 128 cannot hold the staged tiles; 2 x 64 can.
  auto d256 = headline_problem(4096, 256, false, Precision::fp8_e4m3, Direction::forward);
  auto c256 = f.default_config(d256);
  c256["kTransposeV"] = 1;
  REQUIRE(f.violates(c256, d256));
  CHECK(f.violates(c256, d256)->find("227 KiB") != std::string::npos);
  c256["kBlockN"] = 64;
  c256["kIntraWgOverlap"] = 1;
  CHECK_FALSE(f.violates(c256, d256));
  // Device quantisation still runs first (its descales are device arrays: kBlockDescale).
  auto device = p;
  device.fp8.on_device = true;
  auto const device_steps = f.launches(c, device);
  REQUIRE(device_steps.size() >= 2);
  CHECK(device_steps.back().name_expression.find(", 0, 0, 1>") != std::string::npos);  // the forward, last
  for (auto const& s : device_steps) CHECK(s.name_expression.find("transpose_v") == std::string::npos);
}

TEST_CASE("fa3_sm90 kTransposeV is an axis of the FP8 space only", "[device][fp8]") {
  Fa3Sm90Family const f;
  auto has_in_kernel_transpose = [&](Problem const& p) {
    auto const space = enumerate_space(f, p);
    REQUIRE_FALSE(space.empty());
    CHECK(std::find(space.begin(), space.end(), f.default_config(p)) != space.end());
    return std::any_of(space.begin(), space.end(), [](Config const& c) { return c.at("kTransposeV") == 1; });
  };
  for (int d : {64, 128, 256}) {
    INFO("d" << d);
    CHECK(has_in_kernel_transpose(headline_problem(4096, d, false, Precision::fp8_e4m3, Direction::forward)));
    CHECK(has_in_kernel_transpose(headline_problem(4096, d, true, Precision::fp8_e5m2, Direction::forward)));
    CHECK_FALSE(
        has_in_kernel_transpose(headline_problem(4096, d, true, Precision::bf16, Direction::forward)));
    auto pv = headline_problem(4096, d, false, Precision::fp8_e4m3, Direction::forward);
    pv.fp8.bf16_pv = true;
    CHECK_FALSE(has_in_kernel_transpose(pv));
  }
  auto p = headline_problem(4096, 128, false, Precision::bf16, Direction::forward);
  auto c = f.default_config(p);
  c["kTransposeV"] = 1;
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("kTransposeV") != std::string::npos);
}
