// The backward family descriptions: launches, scratch, the search spaces (both dQ modes, FlashAttention-2's
// own sm80 tiles included), the constraints, and the registry.
#include <catch2/catch.hpp>

#include <algorithm>

#include "device/families/families.hpp"
#include "device/families/registry.hpp"

using namespace fl::device;
using fl::common::Precision;

namespace {

Problem bwd(int n, int d, bool causal) {
  return headline_problem(n, d, causal, Precision::bf16, Direction::backward);
}

bool space_has(std::vector<Config> const& space, Config const& wanted) {
  return std::any_of(space.begin(), space.end(), [&](Config const& c) {
    return std::all_of(wanted.begin(), wanted.end(),
                       [&](auto const& kv) { return value_or(c, kv.first, -1) == kv.second; });
  });
}

std::size_t dq_accum_bytes(Problem const& p) {
  return sizeof(float) * std::size_t(p.shape.batch) * p.shape.heads_q * p.shape.seqlen_q * p.shape.head_dim;
}

}  // namespace

TEST_CASE("fa2_sm80_bwd atomic dQ: preprocess, dK/dV with dQ REDs, convert, fp32 dQ scratch", "[device]") {
  Fa2Sm80BwdFamily const f;
  auto const p = bwd(2048, 128, true);
  // The atomic mode at the tiles picked from ptxas for d128 (no longer the default: slower on the H200).
  Config const c{{"kBlockM", 32},  {"kBlockN", 128}, {"kNWarps", 8},  {"kStages", 1},
                 {"kDqAtomic", 1}, {"kQBlockM", 64}, {"kQBlockN", 32}};
  CHECK_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].name_expression.find("fa_bwd_preprocess<__nv_bfloat16, 128, 4, true>") == 0);
  CHECK(steps[1].name_expression.find("fa2_sm80_bwd_dkdv<") == 0);
  CHECK(steps[1].grid.x == unsigned(2048 / value_or(c, "kBlockN", 1)));
  CHECK(steps[1].grid.y == unsigned(p.shape.heads_kv));
  CHECK(steps[1].dynamic_shared_bytes == fa2_sm80_bwd::dkdv_shared_bytes(value_or(c, "kBlockM", 0),
                                                                         value_or(c, "kBlockN", 0),
                                                                         value_or(c, "kStages", 0), 1, 128));
  CHECK(steps[2].name_expression == "fa_bwd_dq_convert<__nv_bfloat16, 128>");
  // 8 dQ elements per thread, 128 threads per block.
  CHECK(steps[2].grid.x * 128ull * 8 == std::size_t(p.shape.batch) * p.shape.heads_q * 2048 * 128);
  CHECK(f.scratch(c, p).dq_accum == dq_accum_bytes(p));
  CHECK(f.scratch(c, p).total() == dq_accum_bytes(p));
}

TEST_CASE("fa2_sm80_bwd deterministic dQ: a separate pass and no scratch", "[device]") {
  Fa2Sm80BwdFamily const f;
  auto const p = bwd(1024, 64, false);
  auto const c = fa2_sm80_bwd::deterministic_config(p);
  REQUIRE(value_or(c, "kDqAtomic", -1) == 0);
  CHECK_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].name_expression.find(", false>") != std::string::npos);  // no accumulator to clear
  CHECK(steps[2].name_expression.find("fa2_sm80_bwd_dq<") == 0);
  CHECK(steps[2].grid.x == unsigned(1024 / value_or(c, "kQBlockM", 1)));
  CHECK(f.scratch(c, p).total() == 0);
}

TEST_CASE("fa2_sm80_bwd space: both dQ modes, both stage counts, FA2's sm80 tiles", "[device]") {
  Fa2Sm80BwdFamily const f;
  for (int d : {64, 128}) {
    auto const p = bwd(4096, d, false);
    auto const space = enumerate_space(f, p);
    INFO("d" << d << ": " << space.size() << " configs");
    for (auto const& c : space) CHECK_FALSE(f.violates(c, p));
    CHECK(space_has(space, {{"kDqAtomic", 0}}));
    CHECK(space_has(space, {{"kDqAtomic", 1}}));
    CHECK(space_has(space, {{"kStages", 1}, {"kDqAtomic", 1}}));
    CHECK(space_has(space, {{"kStages", 2}, {"kDqAtomic", 1}}));
    CHECK(space_has(space, f.default_config(p)));
    CHECK(space_has(space, fa2_sm80_bwd::deterministic_config(p)));
    // flash_bwd_launch_template.h, sm80 with >= 144 KiB shared memory: d64 kBlockM 128, kBlockN 128,
    // 8 warps; d128 kBlockM 64, kBlockN 128, 8 warps; Q double-buffered, dQ by atomics.
    Config const fa2_tile{
        {"kBlockM", d == 64 ? 128 : 64}, {"kBlockN", 128}, {"kNWarps", 8}, {"kStages", 2}, {"kDqAtomic", 1}};
    CHECK(space_has(space, fa2_tile));
    // With atomics the dQ-pass tunables are pinned: no config appears twice under another name.
    for (auto const& c : space)
      if (value_or(c, "kDqAtomic", 0) == 1) {
        CHECK(value_or(c, "kQBlockM", 0) == 64);
        CHECK(value_or(c, "kQBlockN", 0) == 32);
      }
  }
  auto const p = bwd(4096, 128, false);
  auto bad = f.default_config(p);
  bad["kQBlockM"] = 128;  // atomic mode with a dQ-pass value: a duplicate of the default
  CHECK(f.violates(bad, p));
  bad = f.default_config(p);
  bad["kStages"] = 3;
  CHECK(f.violates(bad, p));
  bad = f.default_config(p);
  bad["kBlockM"] = 128;  // kMT 1 x (128 + 128) = 256 accumulators
  CHECK(f.violates(bad, p));
}

TEST_CASE("fa1_bwd: preprocess, one launch per key block, convert, fp32 dQ scratch", "[device]") {
  Fa1BwdFamily const f;
  auto p = bwd(1024, 64, true);
  p.shape.seqlen_k = 1000;
  auto const c = f.default_config(p);
  CHECK_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  int const outer = (1000 + value_or(c, "kBlockN", 1) - 1) / value_or(c, "kBlockN", 1);
  REQUIRE(steps.size() == std::size_t(outer + 2));
  CHECK(steps.front().name_expression == "fa_bwd_preprocess<__nv_bfloat16, 64, 4, false>");
  for (int j = 0; j < outer; ++j) {
    auto const& s = steps[std::size_t(j) + 1];
    CHECK(s.step == j);
    CHECK(s.name_expression.find("fa1_bwd_step<__nv_bfloat16, 64, ") == 0);
    CHECK(s.grid.x == unsigned(p.shape.heads_kv));
    CHECK(s.grid.y == unsigned(p.shape.batch));
  }
  CHECK(steps.back().name_expression == "fa_bwd_dq_convert<__nv_bfloat16, 64>");
  CHECK(f.scratch(c, p).dq_accum == dq_accum_bytes(p));
  CHECK(f.unsupported(headline_problem(1024, 64, true, Precision::bf16, Direction::forward)));
  CHECK(f.unsupported(bwd(1024, 256, false)));
  for (int d : {64, 128}) {
    auto const q = bwd(2048, d, false);
    auto const space = enumerate_space(f, q);
    CHECK(space.size() > 1);
    CHECK(space_has(space, f.default_config(q)));
    for (auto const& config : space) CHECK_FALSE(f.violates(config, q));
  }
  auto bad = c;
  bad["kBlockM"] = 96;
  CHECK(f.violates(bad, p));
}

TEST_CASE("the registry knows both backward families", "[device]") {
  CHECK(find_family("fa2_sm80_bwd"));
  CHECK(find_family("fa1_bwd"));
  CHECK(family_names().find("fa1_bwd") != std::string::npos);
}
