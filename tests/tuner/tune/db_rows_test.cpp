#include <catch2/catch.hpp>

#include "tuner/tune/db_rows.hpp"

using namespace fl::device;
using namespace fl::tuner;

TEST_CASE("measurements of different FP8 recipes never share a database key", "[tuner][tune][fp8]") {
  auto p = headline_problem(2048, 128, false, fl::common::Precision::fp8_e4m3, Direction::forward);
  auto q = p;
  q.fp8.scaling = fl::common::Fp8Scaling::per_block;
  q.fp8.block_rows = 128;
  q.fp8.incoherent = true;
  CHECK(problem_key(p).dtype != problem_key(q).dtype);
  CHECK(describe(problem_from_key(problem_key(q))) == describe(q));
  CHECK(describe(problem_from_key(problem_key(p))) == describe(p));
}
