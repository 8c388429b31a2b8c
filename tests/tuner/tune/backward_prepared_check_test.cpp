// The backward check as fa-tune runs it: the prepared check given the forward's row statistics
// (numerics::gpu::reference_forward_with_statistics, what ReferenceCache builds once per problem) must give
// the verdict and summary of the check from scratch (numerics::gpu::judge_forward) on correct gradients and
// on gradients wrong at a sampled position, and a wrong dQ, dK or dV there must fail.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/gpu/kernel_tensors.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"
#include "tuner/tune/prepared_check.hpp"
#include "tuner/tune/reference_cache.hpp"

using namespace fl;

namespace {

device::Problem awkward_backward(bool causal) {
  return {{1, 4, 2, 97, 131, 64, causal, 0.0}, common::Precision::bf16, device::Direction::backward};
}

// A correct kernel's outputs: the forward it was given, and the float64 gradients rounded to bf16.
device::HostOutputs correct_outputs(device::Problem const& p, device::HostInputs const& in,
                                    device::HostOutputs const& forward) {
  auto const ref = numerics::reference_attention(numerics::gpu::to_attention_inputs(p, in));
  auto rounded = [&](std::vector<double> const& t) {
    std::vector<float> out(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) out[i] = numerics::round_to(p.dtype, float(t[i]));
    return out;
  };
  device::HostOutputs out = forward;
  out.dq = rounded(ref.dq);
  out.dk = rounded(ref.dk);
  out.dv = rounded(ref.dv);
  return out;
}

std::size_t first_row(std::vector<std::size_t> const& sample, std::size_t rows, bool in_sample) {
  for (std::size_t r = 3; r < rows; ++r)
    if (std::binary_search(sample.begin(), sample.end(), r) == in_sample) return r;
  FAIL("no such row");
  return 0;
}

}  // namespace

TEST_CASE("the backward check given the forward's statistics is the check from scratch", "[tuner][tune]") {
  constexpr std::size_t kSampleRows = 48;
  constexpr std::uint64_t kSeed = 3;
  for (bool causal : {false, true}) {
    auto const p = awkward_backward(causal);
    auto const in = numerics::gpu::make_normal_inputs(p, 11);
    auto const forward = numerics::gpu::reference_forward_with_statistics(p, in);
    CHECK(forward.forward.o == numerics::gpu::reference_forward(p, in).o);  // the same forward, bit for bit
    tuner::PreparedCheck const given(p, in, kSampleRows, kSeed, forward.statistics);
    tuner::PreparedCheck const own(p, in, kSampleRows, kSeed);
    REQUIRE(given.sampled());
    auto const good = correct_outputs(p, in, forward.forward);
    std::size_t const d = 64;
    auto const& sample = given.sample();
    std::size_t const key = first_row(sample.key_rows, numerics::key_rows(p.shape), true);
    std::size_t const unsampled_key = first_row(sample.key_rows, numerics::key_rows(p.shape), false);
    std::size_t const query = first_row(sample.query_rows, numerics::query_rows(p.shape), true);

    struct Case {
      std::string what;
      device::HostOutputs out;
      bool pass;
    };
    std::vector<Case> cases{{"correct", good, true}};
    auto wrong = [&](std::string what, std::vector<float> device::HostOutputs::*tensor, std::size_t row,
                     bool pass) {
      Case c{std::move(what), good, pass};
      (c.out.*tensor)[row * d + 5] += 1.0f;
      cases.push_back(std::move(c));
    };
    wrong("dK + 1 in a sampled key row", &device::HostOutputs::dk, key, false);
    wrong("dV + 1 in a sampled key row", &device::HostOutputs::dv, key, false);
    wrong("dQ + 1 in a sampled query row", &device::HostOutputs::dq, query, false);
    // What a sample does not see it does not judge (fa-check --full does): the same for both checks.
    wrong("dK + 1 in an unsampled key row", &device::HostOutputs::dk, unsampled_key, true);
    for (auto const& c : cases) {
      INFO((causal ? "causal, " : "full, ") << c.what);
      auto const expected = numerics::gpu::judge_forward(p, in, c.out, kSampleRows, kSeed);
      auto const got = given.judge(c.out);
      CHECK(expected.pass == c.pass);
      CHECK(got.pass == expected.pass);
      CHECK(got.summary == expected.summary);
      CHECK(own.judge(c.out).summary == expected.summary);
    }
  }
}

TEST_CASE("the reference cache computes a backward's forward once per process", "[tuner][tune]") {
  auto const p = awkward_backward(true);
  tuner::ReferenceCache cache;
  for (std::size_t rows : {48, 40}) {  // another set of the same inputs (a set dropped and built again)
    auto const& set = cache.normal_set(p, 11, rows);
    CHECK(cache.forwards_kept() == (rows == 48 ? 0 : 1));
    auto const forward = numerics::gpu::reference_forward_with_statistics(p, set.check.inputs());
    CHECK(set.forward.o == forward.forward.o);
    CHECK(set.forward.lse == forward.forward.lse);
    auto out = correct_outputs(p, set.check.inputs(), set.forward);
    for (bool right : {true, false}) {
      if (!right) out.dv[2] -= 1.0f;  // key row 0: always sampled
      auto const expected = numerics::gpu::judge_forward(p, set.check.inputs(), out, rows, 11);
      CHECK(expected.pass == right);
      CHECK(set.check.judge(out).summary == expected.summary);
    }
  }
}

TEST_CASE("a forward computed ahead is the one computed in place, and is taken once", "[tuner][tune]") {
  auto const p = awkward_backward(false);
  tuner::ReferenceCache ahead, in_place;
  ahead.forward_ahead(p, 11);
  ahead.forward_ahead(p, 11);  // one at a time: a second call does nothing
  device::Problem forward_problem = p;
  forward_problem.direction = device::Direction::forward;
  ahead.forward_ahead(forward_problem, 11);  // a forward problem's check needs no forward
  auto const& set = ahead.normal_set(p, 11, 48);
  CHECK(ahead.forwards_ahead() == 1);
  auto const& expected = in_place.normal_set(p, 11, 48);
  CHECK(in_place.forwards_ahead() == 0);
  CHECK(set.forward.o == expected.forward.o);
  CHECK(set.forward.lse == expected.forward.lse);
  auto const out = correct_outputs(p, set.check.inputs(), set.forward);
  CHECK(set.check.judge(out).summary == expected.check.judge(out).summary);
  // Kept in memory now: asking again starts nothing, and another set of it takes nothing ahead.
  ahead.forward_ahead(p, 11);
  (void)ahead.normal_set(p, 11, 40);
  CHECK(ahead.forwards_ahead() == 1);
  CHECK(ahead.forwards_kept() == 1);
}

TEST_CASE("forwards asked for ahead are taken in any order and one never taken holds none back",
          "[tuner][tune]") {
  auto const p = awkward_backward(false);  // one problem, a forward per seed
  tuner::ReferenceCache cache;
  static_assert(tuner::ReferenceCache::kAheadForwards == 2);
  cache.forward_ahead(p, 1);  // a problem passed over: never taken
  cache.forward_ahead(p, 2);
  (void)cache.normal_set(p, 2, 16);
  CHECK(cache.forwards_ahead() == 1);
  cache.forward_ahead(p, 3);
  (void)cache.normal_set(p, 3, 16);
  CHECK(cache.forwards_ahead() == 2);
  cache.forward_ahead(p, 4);  // waits for seed 1's pass: one at a time
  (void)cache.normal_set(p, 4, 16);
  CHECK(cache.forwards_ahead() == 3);
  cache.forward_ahead(p, 5);
  cache.forward_ahead(p, 6);  // a third: seed 1, the oldest, is dropped; its pass has ended, so it is kept
  (void)cache.normal_set(p, 6, 16);
  CHECK(cache.forwards_ahead() == 4);
  auto const kept = cache.forwards_kept();
  auto const& from_memory = cache.normal_set(p, 1, 16);
  CHECK(cache.forwards_ahead() == 4);
  CHECK(cache.forwards_kept() == kept + 1);
  tuner::ReferenceCache fresh;
  CHECK(from_memory.forward.o == fresh.normal_set(p, 1, 16).forward.o);
}

TEST_CASE("a forward computed ahead for a problem never reached is cancelled with the cache",
          "[tuner][tune]") {
  // b2 h8 n1024 d64: a pass of several seconds here; the cache is gone long before.
  device::Problem const p({2, 8, 8, 1024, 1024, 64, false, 0.0}, common::Precision::bf16,
                          device::Direction::backward);
  auto const start = std::chrono::steady_clock::now();
  {
    tuner::ReferenceCache cache;
    cache.forward_ahead(p, 5);
  }
  INFO("the cache was destroyed after "
       << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s");
  SUCCEED();  // no hang, no leak (the sanitizer build checks the thread is joined)
}
