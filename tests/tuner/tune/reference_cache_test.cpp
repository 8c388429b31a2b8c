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

TEST_CASE("large sets are kept while they fit the memory given, the first ones first", "[tuner][tune]") {
  // b1 h8 n2048 d128 bf16: ~100 MB a set (over kLargeSetBytes) in ~0.3 s here; four seeds, room for two.
  Problem const problem({1, 8, 8, 2048, 2048, 128, false, 0.0}, Precision::bf16, Direction::forward);
  std::size_t set_bytes = 0;
  {
    ReferenceCache probe;
    set_bytes = ReferenceCache::bytes_of(probe.normal_set(problem, 1, 8));
  }
  REQUIRE(set_bytes >= ReferenceCache::kLargeSetBytes);
  ReferenceCache cache(true, std::nullopt, set_bytes * 5 / 2);
  for (std::uint64_t seed : {1, 2, 3, 4}) (void)cache.normal_set(problem, seed, 8);
  CHECK(cache.size() == 2);  // the first and the one in use: each new one displaced the one before it
  CHECK(cache.large_sets_dropped() == 2);
  // The second pass of fa-tune asks again in the same order: the first set is still there, no build.
  double const built = cache.seconds_spent();
  (void)cache.normal_set(problem, 1, 8);
  CHECK(cache.seconds_spent() == built);
  (void)cache.normal_set(problem, 2, 8);  // built again, and it displaces seed 4's
  CHECK(cache.seconds_spent() > built);
  CHECK(cache.size() == 2);
  // With no budget given, a share of this machine's memory: a 24 GiB machine keeps tens of these.
  ReferenceCache roomy;
  for (std::uint64_t seed : {1, 2, 3}) (void)roomy.normal_set(problem, seed, 8);
  CHECK(roomy.size() == 3);
  CHECK(roomy.large_sets_dropped() == 0);
}

TEST_CASE("a forward set built ahead is the set built in place, and a backward asks forward_ahead",
          "[tuner][tune]") {
  // fa-tune's next problem's set is built while this one runs (GpuEvaluator::prepare); normal_set takes it.
  Problem const bf16 = headline_problem(256, 64, true, Precision::bf16, Direction::forward);
  Problem fp8 = headline_problem(256, 64, false, Precision::fp8_e4m3, Direction::forward);
  fp8.fp8.scaling = common::Fp8Scaling::per_block;
  fp8.fp8.block_rows = 64;
  ReferenceCache ahead(true), in_place(true);
  ahead.normal_set_ahead(bf16, 3, 16);
  ahead.normal_set_ahead(fp8, 3, 16);
  ahead.normal_set_ahead(bf16, 3, 16);  // asked again: one build
  for (auto const& p : {bf16, fp8}) {
    INFO(describe(p));
    auto const& a = ahead.normal_set(p, 3, 16);
    auto const& b = in_place.normal_set(p, 3, 16);
    CHECK(a.check.inputs().q == b.check.inputs().q);
    CHECK(a.check.inputs().v == b.check.inputs().v);
    CHECK(bool(a.check.inputs().encoded) == bool(b.check.inputs().encoded));
    if (a.check.inputs().encoded) CHECK(a.check.inputs().encoded->k == b.check.inputs().encoded->k);
    CHECK(a.check.reference().sample.query_rows == b.check.reference().sample.query_rows);
    CHECK(a.check.reference().o == b.check.reference().o);
    CHECK(a.check.reference().lse == b.check.reference().lse);
    CHECK(bool(a.fp8) == bool(b.fp8));
    if (a.fp8) CHECK(a.fp8->v == b.fp8->v);
  }
  CHECK(ahead.sets_ahead() == 2);
  CHECK(in_place.sets_ahead() == 0);
  ahead.normal_set_ahead(bf16, 3, 16);  // kept already: nothing to build
  CHECK(&ahead.normal_set(bf16, 3, 16) == &ahead.normal_set(bf16, 3, 16));
  CHECK(ahead.sets_ahead() == 2);
  // A backward problem's set needs its forward, which forward_ahead computes: normal_set_ahead leaves it.
  Problem const backward = headline_problem(256, 64, false, Precision::bf16, Direction::backward);
  ahead.normal_set_ahead(backward, 3, 16);
  (void)ahead.normal_set(backward, 3, 16);
  CHECK(ahead.sets_ahead() == 2);
}
