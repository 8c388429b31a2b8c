#include "device/families/families.hpp"

#include <catch2/catch.hpp>

#include "device/families/registry.hpp"

using namespace fl::device;
using fl::common::Precision;

TEST_CASE("fa2_sm80 default configs satisfy the constraints of every supported problem", "[device]") {
  Fa2Sm80Family const f;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto dtype : {Precision::fp16, Precision::bf16}) {
        auto const p = headline_problem(2048, d, causal, dtype, Direction::forward);
        CHECK_FALSE(f.unsupported(p));
        INFO(to_string(f.default_config(p)));
        CHECK_FALSE(f.violates(f.default_config(p), p));
      }
}

TEST_CASE("fa2_sm80 refuses what it cannot run", "[device]") {
  Fa2Sm80Family const f;
  auto p = headline_problem(2048, 96, false, Precision::bf16, Direction::forward);
  CHECK(f.unsupported(p));
  p = headline_problem(2048, 64, false, Precision::fp8_e4m3, Direction::forward);
  CHECK(f.unsupported(p));
}

TEST_CASE("fa2_sm80 constraints mirror the kernel's static_asserts", "[device]") {
  Fa2Sm80Family const f;
  auto const p = headline_problem(2048, 128, false, Precision::bf16, Direction::forward);
  auto c = f.default_config(p);
  c["kWarpsN"] = 3;
  CHECK(f.violates(c, p));  // does not divide kNWarps
  c = f.default_config(p);
  c["kBlockN"] = 40;
  CHECK(f.violates(c, p));  // not whole 16-key P.V steps
  c = f.default_config(p);
  c["kBlockN"] = 128;  // 4 warps x 32 rows with 128 keys: 256 accumulator registers per thread
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("registers") != std::string::npos);
  c = f.default_config(p);
  c["kStages"] = 5;
  CHECK(f.violates(c, p));
}

TEST_CASE("fa2_sm80 space enumerates only valid configs, the default among them", "[device]") {
  Fa2Sm80Family const f;
  for (int d : {64, 128, 256}) {
    auto const p = headline_problem(4096, d, false, Precision::bf16, Direction::forward);
    auto const space = enumerate_space(f, p);
    REQUIRE_FALSE(space.empty());
    for (auto const& c : space) CHECK_FALSE(f.violates(c, p));
    CHECK(std::find(space.begin(), space.end(), f.default_config(p)) != space.end());
  }
}

TEST_CASE("fa2_sm80 launch geometry covers every query row, head and batch", "[device]") {
  Fa2Sm80Family const f;
  auto p = headline_problem(4096, 128, true, Precision::bf16, Direction::forward);
  p.shape.seqlen_q = 1000;
  Config const c{{"kBlockM", 128}, {"kBlockN", 32}, {"kNWarps", 4},      {"kStages", 1},
                 {"kWarpsN", 1},   {"kQInRegs", 0}, {"kEpilogueSmem", 1}};
  REQUIRE_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].grid.x == 8);  // ceil(1000 / 128)
  CHECK(steps[0].grid.y == unsigned(p.shape.heads_q));
  CHECK(steps[0].grid.z == unsigned(p.shape.batch));
  CHECK(steps[0].block.x == 128);
  CHECK(steps[0].dynamic_shared_bytes == 128 * 256 + 2 * 32 * 256);
  CHECK(steps[0].name_expression == "fa2_sm80_fwd<__nv_bfloat16, 128, 128, 32, 4, 1, 1, false, true, true>");
}

TEST_CASE("the registry finds families by name", "[device]") {
  REQUIRE(find_family("fa2_sm80"));
  CHECK_FALSE(find_family("nope"));
  CHECK(family_names().find("fa2_sm80") != std::string::npos);
}
