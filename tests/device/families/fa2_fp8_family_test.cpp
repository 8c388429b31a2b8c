// fa2_fp8's host-side description: dtypes, head dims, scaling blocks, the constraints, name expressions,
// launches. (That the constraints match the kernel's static_asserts is
// tests/kernels_src/fa2_fp8_compile_test.)
#include <catch2/catch.hpp>

#include "device/families/families.hpp"
#include "device/families/registry.hpp"

using namespace fl::device;
using fl::common::Fp8Scaling;
using fl::common::Precision;

TEST_CASE("fa2_fp8 runs FP8 forward problems only, and per-block scaling in whole 32-row blocks",
          "[device][fp8]") {
  Fa2Fp8Family const f;
  REQUIRE(find_family("fa2_fp8"));
  auto p = headline_problem(1024, 128, false, Precision::fp8_e4m3, Direction::forward);
  CHECK_FALSE(f.unsupported(p));
  p.dtype = Precision::fp8_e5m2;
  CHECK_FALSE(f.unsupported(p));
  p.dtype = Precision::bf16;
  REQUIRE(f.unsupported(p));
  CHECK(f.unsupported(p)->find("fp8_e4m3") != std::string::npos);
  p.dtype = Precision::fp8_e4m3;
  p.direction = Direction::backward;
  CHECK(f.unsupported(p));
  p.direction = Direction::forward;
  p.shape.head_dim = 96;
  CHECK(f.unsupported(p));
  p.shape.head_dim = 128;
  p.fp8.scaling = Fp8Scaling::per_block;
  p.fp8.block_rows = 48;
  CHECK(f.unsupported(p));
  p.fp8.block_rows = 128;
  CHECK_FALSE(f.unsupported(p));
}

TEST_CASE("fa2_fp8 defaults are valid, the space is non-trivial and every member passes violates()",
          "[device][fp8]") {
  Fa2Fp8Family const f;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto scaling : {Fp8Scaling::per_tensor, Fp8Scaling::per_block}) {
        auto p = headline_problem(2048, d, causal, Precision::fp8_e4m3, Direction::forward);
        p.fp8.scaling = scaling;
        INFO(describe(p));
        CHECK_FALSE(f.violates(f.default_config(p), p));
        auto const space = enumerate_space(f, p);
        CHECK(space.size() >= 8);
        for (auto const& c : space) CHECK_FALSE(f.violates(c, p));
      }
}

TEST_CASE("fa2_fp8 constraints name the rule a config breaks", "[device][fp8]") {
  Fa2Fp8Family const f;
  auto const p = headline_problem(1024, 128, false, Precision::fp8_e4m3, Direction::forward);
  auto c = f.default_config(p);
  c["kBlockN"] = 48;
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("32") != std::string::npos);
  c = f.default_config(p);
  c["kBlockM"] = 128;
  c["kBlockN"] = 128;
  c["kNWarps"] = 4;  // 2 row tiles per warp: 4 * 2 * (16 + 16) = 256 accumulator registers
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("256 registers") != std::string::npos);
}

TEST_CASE("fa2_fp8 name expression and launch follow the problem (dtype, scaling, causal)", "[device][fp8]") {
  Fa2Fp8Family const f;
  auto p = headline_problem(1000, 64, true, Precision::fp8_e5m2, Direction::forward);
  p.shape.seqlen_q = 1000;
  p.fp8.scaling = Fp8Scaling::per_block;
  Config const c{{"kBlockM", 128}, {"kBlockN", 64}, {"kNWarps", 8}, {"kStages", 2}, {"kQInRegs", 1}};
  REQUIRE_FALSE(f.violates(c, p));
  CHECK(f.name_expressions(c, p).front() ==
        "fa2_fp8_fwd<__nv_fp8_e5m2, 64, 128, 64, 8, 2, true, true, true>");
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].grid.x == 8u);  // ceil(1000 / 128)
  CHECK(steps[0].grid.y == unsigned(p.shape.heads_q));
  CHECK(steps[0].block.x == 256u);
  CHECK(steps[0].dynamic_shared_bytes == std::size_t(64) * (128 + 2 * 2 * 64));  // one byte per element
  CHECK(describe(p).find("per_block64") != std::string::npos);
}
