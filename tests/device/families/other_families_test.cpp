#include <catch2/catch.hpp>

#include "device/families/families.hpp"

using namespace fl::device;
using fl::common::Precision;

TEST_CASE("naive: three launches, S and P scratch of n_q x ld elements per head", "[device]") {
  NaiveFamily const f;
  auto p = headline_problem(1024, 64, false, Precision::bf16, Direction::forward);
  auto c = f.default_config(p);
  CHECK_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].step == 0);
  CHECK(steps[2].step == 2);
  CHECK(steps[0].grid.x == 8u);  // 1024 / 128 query rows
  CHECK(steps[1].grid.x == unsigned(p.shape.batch * p.shape.heads_q * 1024));
  std::size_t const elements = std::size_t(p.shape.batch) * p.shape.heads_q * 1024 * 1024;
  CHECK(f.scratch(c, p).s == 4 * elements);  // fp32 S by default
  CHECK(f.scratch(c, p).p == 2 * elements);  // P in the input type
  CHECK(f.score_precision(c, p) == Precision::fp32);
  c["kScoreBits"] = 16;
  CHECK(f.scratch(c, p).s == 2 * elements);
  CHECK(f.score_precision(c, p) == Precision::bf16);  // what numerics' check budgets (kernel_check_test)
  CHECK(Fa2Sm80Family{}.score_precision(c, p) == Precision::fp32);
  // Rows padded to 128 keys: n_k = 1000 takes 1024 per row, n_q rows exactly.
  p.shape.seqlen_k = 1000;
  p.shape.seqlen_q = 333;
  CHECK(f.scratch(c, p).p == std::size_t(2) * p.shape.batch * p.shape.heads_q * 333 * 1024);
  CHECK(f.launches(c, p)[0].grid.x == 3u);
  // The softmax keeps a row in shared memory up to 64 KiB: 32768 keys of 16-bit S, 16384 of fp32.
  CHECK(f.launches(c, p)[1].dynamic_shared_bytes == 2048u);
  p.shape.seqlen_k = 32769;
  CHECK(f.launches(c, p)[1].dynamic_shared_bytes == 0u);
  for (int d : {64, 128, 256}) {
    auto const q = headline_problem(1024, d, true, Precision::fp16, Direction::forward);
    auto const space = enumerate_space(f, q);
    CHECK_FALSE(space.empty());
    CHECK_FALSE(f.violates(f.default_config(q), q));
    for (auto const& config : space) CHECK(f.launches(config, q)[0].dynamic_shared_bytes <= 227u * 1024);
  }
  auto bad = c;
  bad["kStages"] = 4;
  CHECK(f.violates(bad, p));
  p.shape.head_dim = 96;
  CHECK(f.unsupported(p));
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
