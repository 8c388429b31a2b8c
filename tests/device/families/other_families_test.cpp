#include <catch2/catch.hpp>

#include "device/families/families.hpp"

using namespace fl::device;
using fl::common::Precision;

TEST_CASE("naive: three launches, S and P scratch of n_q x n_k floats per head", "[device]") {
  NaiveFamily const f;
  auto p = headline_problem(1024, 64, false, Precision::bf16, Direction::forward);
  auto const c = f.default_config(p);
  CHECK_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].step == 0);
  CHECK(steps[2].step == 2);
  CHECK(steps[1].grid.x == unsigned(p.shape.batch * p.shape.heads_q * 1024));
  CHECK(f.scratch(c, p).s == std::size_t(4) * p.shape.batch * p.shape.heads_q * 1024 * 1024);
  CHECK(f.scratch(c, p).p == f.scratch(c, p).s);
}

TEST_CASE("fa1: one launch per key block, O/m/l scratch per query row", "[device]") {
  Fa1Family const f;
  auto p = headline_problem(1024, 128, true, Precision::fp16, Direction::forward);
  p.shape.seqlen_k = 1000;
  auto const c = f.default_config(p);
  CHECK_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 8);  // ceil(1000 / 128)
  CHECK(steps.back().step == 7);
  CHECK(f.scratch(c, p).o == std::size_t(4) * p.shape.batch * p.shape.heads_q * 1024 * 128);
  // The state's rows per head are rounded up to whole 16-row tiles (fa_fragment_state.cuh).
  auto odd = p;
  odd.shape.seqlen_q = 1001;
  CHECK(f.scratch(c, odd).m == std::size_t(4) * p.shape.batch * p.shape.heads_q * 1008);
  CHECK(f.scratch(c, odd).o == f.scratch(c, odd).m * 128);
  auto bad = c;
  bad["kNWarps"] = 3;
  CHECK(f.violates(bad, p));
  bad = c;
  bad["kChunkN"] = 48;  // 128 keys are not whole 48-key chunks
  CHECK(f.violates(bad, p));
  for (auto const& config : enumerate_space(f, p)) CHECK_FALSE(f.violates(config, p));
}
