#include "tuner/problem.hpp"

#include <catch2/catch.hpp>

using namespace fl::tuner;
using fl::numerics::Precision;

TEST_CASE("FLOPs follow the FlashAttention convention", "[tuner]") {
  auto p = headline_problem(4096, 128, false, Precision::bf16, Direction::forward);
  CHECK(p.shape.batch == 4);
  CHECK(p.shape.heads_q == 16);
  CHECK(attention_flops(p) == Approx(4.0 * 4 * 16 * 4096.0 * 4096.0 * 128));
  p.shape.causal = true;
  CHECK(attention_flops(p) == Approx(2.0 * 4 * 16 * 4096.0 * 4096.0 * 128));
  p.direction = Direction::backward;
  CHECK(attention_flops(p) == Approx(2.5 * 2.0 * 4 * 16 * 4096.0 * 4096.0 * 128));
}

TEST_CASE("problems describe themselves in one line", "[tuner]") {
  auto const p = headline_problem(1024, 64, true, Precision::fp16, Direction::forward);
  CHECK(describe(p) == "b16 h32/32 n1024x1024 d64 fp16 causal fwd");
}
