// The reference cache keeps each set's 16-bit encodings when asked (--pace fast), so that the uploads of
// every candidate skip the conversion; the baseline pace keeps none and converts per upload, as before.
#include <catch2/catch.hpp>

#include "tuner/tune/reference_cache.hpp"

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
  // FP8 inputs are quantised per upload set, never 16-bit encoded.
  Problem fp8 = problem;
  fp8.dtype = Precision::fp8_e4m3;
  CHECK_FALSE(once.normal_set(fp8, 3, 16).check.inputs().encoded);
}
