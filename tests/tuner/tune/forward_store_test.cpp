// fa-tune --forward-store: a backward problem's forward and row statistics kept on disk, read back by the
// next process, and never used when they are not the reference's.
#include "tuner/tune/forward_store.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/gpu/kernel_tensors.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"
#include "tests/db/temp_dir.hpp"
#include "tuner/tune/reference_cache.hpp"

using namespace fl;
using tuner::ForwardStore;

namespace {

constexpr std::uint64_t kSeed = 5;
constexpr std::size_t kSampleRows = 32;

device::Problem backward(bool causal) {
  return {{1, 2, 1, 90, 120, 32, causal, 0.0}, common::Precision::bf16, device::Direction::backward};
}

// Correct gradients (the float64 reference rounded to bf16) with the forward the kernel was given.
device::HostOutputs correct(device::Problem const& p, tuner::VerificationSet const& set) {
  auto const ref = numerics::reference_attention(numerics::gpu::to_attention_inputs(p, set.check.inputs()));
  device::HostOutputs out = set.forward;
  for (auto [to, from] : {std::pair{&out.dq, &ref.dq}, {&out.dk, &ref.dk}, {&out.dv, &ref.dv}})
    for (double x : *from) to->push_back(numerics::round_to(p.dtype, float(x)));
  return out;
}

}  // namespace

TEST_CASE("the forward store gives back what it was given, and nothing for another problem",
          "[tuner][tune]") {
  db::test::TempDir dir;
  ForwardStore const store(dir.path() / "forwards");
  auto const p = backward(false);
  auto const forward =
      numerics::gpu::reference_forward_with_statistics(p, numerics::gpu::make_normal_inputs(p, kSeed));
  CHECK_FALSE(store.load(p, kSeed));
  REQUIRE_FALSE(store.save(p, kSeed, forward));
  auto const back = store.load(p, kSeed);
  REQUIRE(back);
  CHECK(back->forward.o == forward.forward.o);
  CHECK(back->forward.lse == forward.forward.lse);
  CHECK(back->statistics->lse == forward.statistics->lse);
  CHECK(back->statistics->delta == forward.statistics->delta);
  CHECK_FALSE(store.load(p, kSeed + 1));           // another seed: another file
  CHECK_FALSE(store.load(backward(true), kSeed));  // another mask: another file
  auto other = p;
  other.shape.seqlen_q = 91;
  std::filesystem::copy_file(store.path_of(p, kSeed), store.path_of(other, kSeed));
  CHECK_FALSE(store.load(other, kSeed));  // its counts are not this problem's
  std::filesystem::resize_file(store.path_of(p, kSeed),
                               std::filesystem::file_size(store.path_of(p, kSeed)) - 1);
  CHECK_FALSE(store.load(p, kSeed));  // truncated
}

TEST_CASE("a second process reads the forward from the store and judges as the first did", "[tuner][tune]") {
  db::test::TempDir dir;
  auto const p = backward(true);
  tuner::ReferenceCache first(true, ForwardStore(dir.path()));
  auto const& computed = first.normal_set(p, kSeed, kSampleRows);
  CHECK(first.forwards_loaded() == 0);
  tuner::ReferenceCache second(true, ForwardStore(dir.path()));
  auto const& loaded = second.normal_set(p, kSeed, kSampleRows);
  CHECK(second.forwards_loaded() == 1);
  CHECK(loaded.forward.o == computed.forward.o);
  CHECK(loaded.forward.lse == computed.forward.lse);
  auto out = correct(p, computed);
  CHECK(loaded.check.judge(out).summary == computed.check.judge(out).summary);
  out.dk[3] += 1.0f;  // key row 0 is always sampled
  CHECK_FALSE(loaded.check.judge(out).pass);
  CHECK(loaded.check.judge(out).summary == computed.check.judge(out).summary);
}

TEST_CASE("a stored forward that is not the reference's is computed again and replaced", "[tuner][tune]") {
  db::test::TempDir dir;
  auto const p = backward(false);
  ForwardStore const store(dir.path());
  // The causal problem's forward under the full problem's name: the same counts, other values.
  auto causal_forward = numerics::gpu::reference_forward_with_statistics(
      backward(true), numerics::gpu::make_normal_inputs(backward(true), kSeed));
  REQUIRE_FALSE(store.save(p, kSeed, causal_forward));
  // Only O differs from the reference's (the statistics are right): caught on the sampled rows too.
  auto o_only =
      numerics::gpu::reference_forward_with_statistics(p, numerics::gpu::make_normal_inputs(p, kSeed));
  o_only.forward.o[3] = numerics::round_to(p.dtype, o_only.forward.o[3] * 1.5f + 0.25f);  // query row 0
  for (auto const& stale : {causal_forward, o_only}) {
    REQUIRE_FALSE(store.save(p, kSeed, stale));
    tuner::ReferenceCache cache(true, store);
    auto const& set = cache.normal_set(p, kSeed, kSampleRows);
    CHECK(cache.forwards_loaded() == 0);
    CHECK(set.forward.o == numerics::gpu::reference_forward(p, set.check.inputs()).o);
    auto const out = correct(p, set);
    CHECK(set.check.judge(out).pass);
    CHECK(set.check.judge(out).summary ==
          numerics::gpu::judge_forward(p, set.check.inputs(), out, kSampleRows, kSeed).summary);
    tuner::ReferenceCache again(true, store);  // the file was replaced by the right one
    (void)again.normal_set(p, kSeed, kSampleRows);
    CHECK(again.forwards_loaded() == 1);
  }
}
