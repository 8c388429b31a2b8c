// The reference cache keeps each set's 16-bit encodings, or an FP8 set's quantised operands, when asked
// (--pace fast), so that the uploads of every candidate skip the conversion; the baseline pace keeps none
// and converts per upload, as before.
#include <catch2/catch.hpp>

#include "tuner/tune/reference_cache.hpp"

#include "numerics/gpu/kernel_fp8_operands.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using fl::common::Precision;

TEST_CASE("verification sets carry their inputs' encodings only when encoding once", "[tuner][tune]") {
  Problem const problem = headline_problem(256, 64, true, Precision::bf16, Direction::forward);
  ReferenceCache once(true), each_upload(false);
  auto const& set = once.normal_set(problem, 3, 16);
  REQUIRE(set.check.inputs().encoded);
  auto const& encoded = *set.check.inputs().encoded;
  CHECK(encoded.dtype == Precision::bf16);
  CHECK(encoded.q == device::encode_16bit(set.check.inputs().q, Precision::bf16));
  CHECK(encoded.v == device::encode_16bit(set.check.inputs().v, Precision::bf16));
  CHECK(encoded.d_o.empty());
  CHECK_FALSE(each_upload.normal_set(problem, 3, 16).check.inputs().encoded);
  CHECK_FALSE(set.fp8);
  // FP8 inputs are quantised, never 16-bit encoded.
  Problem fp8 = problem;
  fp8.dtype = Precision::fp8_e4m3;
  CHECK_FALSE(once.normal_set(fp8, 3, 16).check.inputs().encoded);
}

TEST_CASE("an FP8 verification set is quantised once as numerics quantises it", "[tuner][tune]") {
  Problem problem = headline_problem(256, 64, false, Precision::fp8_e4m3, Direction::forward);
  problem.fp8.scaling = common::Fp8Scaling::per_block;
  problem.fp8.block_rows = 64;
  ReferenceCache once(true), each_upload(false);
  auto const& set = once.normal_set(problem, 3, 16);
  REQUIRE(set.fp8);
  auto const expected = numerics::gpu::fp8_operands_for(problem, set.check.inputs());
  REQUIRE(expected);
  CHECK(set.fp8->q == expected->q);
  CHECK(set.fp8->k == expected->k);
  CHECK(set.fp8->v == expected->v);
  CHECK(set.fp8->q_descale == expected->q_descale);
  CHECK(set.fp8->v_descale == expected->v_descale);
  CHECK(set.fp8->block_rows == 64);
  CHECK(once.normal_set(problem, 3, 16).fp8 == set.fp8);  // the same operands for every candidate
  CHECK(set.fp8_refused.empty());
  CHECK_FALSE(each_upload.normal_set(problem, 3, 16).fp8);
  // A head dim the incoherent rotation cannot take: refused once, with numerics' reason.
  Problem refused = headline_problem(256, 48, false, Precision::fp8_e4m3, Direction::forward);
  refused.fp8.incoherent = true;
  auto const& bad = once.normal_set(refused, 3, 16);
  CHECK_FALSE(bad.fp8);
  CHECK_FALSE(bad.fp8_refused.empty());
}
