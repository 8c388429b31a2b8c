#include "tuner/run/forward_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tests/tuner/standard_attention.hpp"

using namespace fl::tuner;
using fl::numerics::Precision;
using fl::test::standard_attention;

namespace {

Problem small_problem(bool causal) {
  Problem p;
  p.shape = {1, 4, 2, 70, 45, 64, causal, 0.0};  // n_q > n_k: the first causal rows see no key at all
  p.dtype = Precision::bf16;
  return p;
}

}  // namespace

TEST_CASE("a correct output passes, fully masked rows included", "[tuner]") {
  for (bool causal : {false, true}) {
    auto const p = small_problem(causal);
    auto const in = make_normal_inputs(p, 3);
    auto const out = standard_attention(p, in);
    auto const c = check_forward(p, in, out);
    INFO(summary(c));
    CHECK(c.pass);
    CHECK(c.rows_checked == 4 * 70);
  }
}

TEST_CASE("a wrong row, a NaN, a wrong LSE or a nonzero masked row fails", "[tuner]") {
  auto const p = small_problem(true);
  auto const in = make_normal_inputs(p, 3);
  auto const good = standard_attention(p, in);
  auto out = good;
  out.o[64 * 50 + 3] += 0.05f;  // one element of one row
  CHECK_FALSE(check_forward(p, in, out).pass);
  out = good;
  out.o[7] = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(check_forward(p, in, out).pass);
  out = good;
  out.lse[69] += 1e-3f;
  CHECK_FALSE(check_forward(p, in, out).pass);
  out = good;
  out.lse[0] = 0.0f;  // row 0 sees no key (n_q - n_k = 25 rows are fully masked): LSE must be -inf
  CHECK_FALSE(check_forward(p, in, out).pass);
}

TEST_CASE("sampled checking always includes the last row", "[tuner]") {
  auto const p = small_problem(false);
  auto const in = make_normal_inputs(p, 5);
  auto out = standard_attention(p, in);
  out.o[(std::size_t(3) * 70 + 69) * 64] += 1.0f;  // last head, last row
  auto const c = check_forward(p, in, out, 8, 2);
  CHECK(c.rows_checked == 16);
  CHECK_FALSE(c.pass);
}

TEST_CASE("16-bit encodings round-trip", "[tuner]") {
  std::vector<float> const x = {1.0f, -2.5f, 0.1f, 65504.0f};
  for (auto dtype : {Precision::fp16, Precision::bf16}) {
    auto const back = decode_16bit(encode_16bit(x, dtype), dtype);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(back[i] == fl::numerics::round_to(dtype, x[i]));
  }
}
