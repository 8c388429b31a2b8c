// Not part of CI ([.]): where the CPU time of verifying a backward problem goes in fa-tune (the timed
// problem's inputs, the float64 forward a backward kernel reads, the prepared check's reference and bounds,
// one candidate's judge). A benchmark, never asserted on time. Run:
//   FA_BWD_COST_SHAPE="B H N D full|causal" build/bin/test_tuner "[bwd-cost]"
// (default "1 2 4096 64 full"): the work of every step is proportional to B H (N_k d per row), so a
// headline shape's cost is this one's times its B H / (this B H).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "common/parallel_for.hpp"
#include "device/problem.hpp"
#include "numerics/check_sample.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/gpu/kernel_tensors.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"
#include "numerics/tolerance.hpp"
#include "tuner/tune/reference_cache.hpp"

using namespace fl;

namespace {

// Wall seconds, and the CPU seconds of every thread (std::clock: the process's), which a shared machine's
// load inflates less: a host with more cores divides the CPU seconds among them.
struct Seconds {
  double wall = 0.0, cpu = 0.0;
};

Seconds seconds_of(auto&& work) {
  auto const start = std::chrono::steady_clock::now();
  std::clock_t const cpu_start = std::clock();
  work();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          double(std::clock() - cpu_start) / CLOCKS_PER_SEC};
}

// A kernel-like backward output: the forward given, the reference's gradients rounded to the dtype on the
// sampled rows, and a finite value elsewhere (nothing for the screen to flag).
device::HostOutputs passing_backward(tuner::VerificationSet const& set) {
  auto const& p = set.check.problem();
  auto const& sample = set.check.sample();
  auto const ref =
      numerics::reference_sampled(numerics::gpu::to_attention_inputs(p, set.check.inputs()), sample);
  device::HostOutputs out = set.forward;
  std::size_t const d = std::size_t(p.shape.head_dim);
  out.dq.assign(p.shape.q_elements(), 0.0f);
  out.dk.assign(p.shape.kv_elements(), 0.0f);
  out.dv.assign(p.shape.kv_elements(), 0.0f);
  for (std::size_t t = 0; t < sample.query_rows.size(); ++t)
    for (std::size_t e = 0; e < d; ++e)
      out.dq[sample.query_rows[t] * d + e] = numerics::round_to(p.dtype, float(ref.dq[t * d + e]));
  for (std::size_t t = 0; t < sample.key_rows.size(); ++t)
    for (std::size_t e = 0; e < d; ++e) {
      out.dk[sample.key_rows[t] * d + e] = numerics::round_to(p.dtype, float(ref.dk[t * d + e]));
      out.dv[sample.key_rows[t] * d + e] = numerics::round_to(p.dtype, float(ref.dv[t * d + e]));
    }
  return out;
}

}  // namespace

TEST_CASE("backward verification cost of one problem", "[.][bwd-cost]") {
  int b = 1, h = 2, n = 4096, d = 64;
  char mask[8] = "full";
  if (char const* shape = std::getenv("FA_BWD_COST_SHAPE"))
    REQUIRE(std::sscanf(shape, "%d %d %d %d %7s", &b, &h, &n, &d, mask) == 5);
  device::Problem problem({b, h, h, n, n, d, std::string(mask) == "causal", 0.0}, common::Precision::bf16,
                          device::Direction::backward);
  constexpr std::size_t kTimedRows = 256;  // GpuEvaluator's
  constexpr std::uint64_t kSeed = 20261129;
  // The steps of ReferenceCache::normal_set one by one, then the cache's own (the steps run twice).
  device::HostInputs inputs;
  numerics::gpu::ForwardWithStatistics forward;
  numerics::AttentionInputs in;
  numerics::SampledOutputs ref;
  auto const inputs_s = seconds_of([&] { inputs = numerics::gpu::make_normal_inputs(problem, kSeed); });
  auto const forward_s =
      seconds_of([&] { forward = numerics::gpu::reference_forward_with_statistics(problem, inputs); });
  auto const convert_s = seconds_of([&] { in = numerics::gpu::to_attention_inputs(problem, inputs); });
  auto const sample = numerics::base_sample(problem.shape, true, kTimedRows, 0, kSeed);
  auto const own_s = seconds_of([&] { ref = numerics::reference_sampled(in, sample); });
  auto const known_s = seconds_of([&] {
    ref = numerics::reference_sampled(in, sample, {0, forward.statistics.get()});
  });
  numerics::ToleranceOptions tol;
  tol.approximate_unsampled_row_stats = true;
  tol.reference = &ref;
  auto const bounds_s = seconds_of(
      [&] { (void)numerics::tolerance_bounds(in, ref.sample, numerics::recipe_for(problem.dtype), tol); });
  tuner::ReferenceCache cache;
  tuner::VerificationSet const* set = nullptr;
  auto const build_s = seconds_of([&] { set = &cache.normal_set(problem, kSeed, kTimedRows); });
  auto const out = passing_backward(*set);
  numerics::gpu::Verdict verdict;
  auto const judge_s = seconds_of([&] { verdict = set->check.judge(out); });
  CHECK(verdict.pass);
  auto const judge_again_s = seconds_of([&] { verdict = set->check.judge(out); });
  // The judge's whole-tensor steps (every row, not only the sampled ones), one by one.
  numerics::AttentionOutputs observed;
  auto const outputs_s = seconds_of([&] { observed = numerics::gpu::to_attention_outputs(out); });
  auto const outputs_again_s = seconds_of([&] { numerics::gpu::assign_attention_outputs(out, observed); });
  auto const recipe = numerics::recipe_for(problem.dtype);
  auto const screen_s = seconds_of([&] {
    (void)numerics::screened_query_rows(in, observed, recipe);
    (void)numerics::nonfinite_key_rows(problem.shape, observed);
  });
  CHECK(verdict.pass);
  std::printf("%s, %d threads: %zu query rows, %zu key rows sampled; seconds wall (CPU):\n",
              device::describe(problem).c_str(), common::resolve_thread_count(0),
              set->check.sample().query_rows.size(), set->check.sample().key_rows.size());
  for (auto const& [what, t] : {std::pair{"inputs", inputs_s},
                                {"forward, every row (the kernel's O, LSE; every row's D)", forward_s},
                                {"to float64", convert_s},
                                {"sampled reference, its own statistics pass (as before)", own_s},
                                {"sampled reference, the forward's statistics", known_s},
                                {"tolerance bounds", bounds_s},
                                {"once per problem: ReferenceCache::normal_set", build_s},
                                {"per candidate: judge, the first", judge_s},
                                {"per candidate: judge, every later one", judge_again_s},
                                {"  of which: its outputs to float64, fresh pages", outputs_s},
                                {"  of which: its outputs to float64, the same pages again", outputs_again_s},
                                {"  of which: the screen of every query and key row", screen_s}})
    std::printf("  %-66s %8.3f (%8.3f)\n", what, t.wall, t.cpu);
}
