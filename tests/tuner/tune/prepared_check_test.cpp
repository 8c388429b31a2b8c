#include "tuner/tune/prepared_check.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "device/run/host_tensors.hpp"
#include "numerics/check.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/gpu/kernel_tensors.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"
#include "tests/numerics/gpu/host_standard_attention.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using fl::common::Precision;
using fl::numerics::InputFamily;
using fl::test::standard_attention;

namespace {

Problem awkward(bool causal) {
  Problem p;
  p.shape = {1, 4, 2, 97, 131, 64, causal, 0.0};
  p.dtype = Precision::bf16;
  return p;
}

// The first query row that is (or is not) in the prepared sample, past the structural first rows.
std::size_t row_with(PreparedCheck const& check, bool in_sample) {
  auto const& rows = check.sample().query_rows;
  for (std::size_t r = 5; r < fl::numerics::query_rows(check.problem().shape); ++r)
    if (std::binary_search(rows.begin(), rows.end(), r) == in_sample) return r;
  FAIL("no such row");
  return 0;
}

}  // namespace

// The cache is only allowed if it never changes a verdict: every output below is judged by the prepared check
// and by numerics::gpu::judge_forward (numerics::run_check from scratch), and both must agree on pass/fail
// and the summary.
TEST_CASE("a prepared check gives run_check's verdict and summary, full and sampled", "[tuner][tune]") {
  int const kRow = 64;  // head dim: elements per row
  for (std::size_t sample_rows : {std::size_t(0), std::size_t(48)})
    for (bool causal : {false, true}) {
      auto p = awkward(causal);
      auto const in = numerics::gpu::family_inputs(p, InputFamily::normal, 7);
      PreparedCheck const prepared(p, in, sample_rows, 3);
      CHECK(prepared.sampled() == (sample_rows > 0));
      auto const good = standard_attention(p, in);

      std::vector<std::pair<std::string, device::HostOutputs>> outputs{{"correct", good}};
      std::vector<std::size_t> rows{row_with(prepared, true)};
      if (prepared.sampled()) rows.push_back(row_with(prepared, false));
      for (std::size_t row : rows)
        for (float delta : {1e-4f, 2e-3f, 8e-3f, 3e-2f, 100.0f}) {
          auto out = good;
          out.o[row * kRow + 3] += delta;
          outputs.emplace_back("O row " + std::to_string(row) + " + " + std::to_string(delta), out);
        }
      auto nan = good;
      nan.o[rows.back() * kRow] = std::numeric_limits<float>::quiet_NaN();
      outputs.emplace_back("NaN in O", nan);
      auto lse = good;
      lse.lse[rows.back()] += 0.01f;
      outputs.emplace_back("LSE + 0.01", lse);

      std::size_t expected_fallbacks = 0;
      for (auto const& [what, out] : outputs) {
        INFO((causal ? "causal, " : "full, ") << sample_rows << " sampled rows, " << what);
        auto const expected = numerics::gpu::judge_forward(p, in, out, sample_rows, 3);
        auto const screened = screened_rows(p.shape, in.v, out, fl::numerics::recipe_for(p.dtype));
        bool const off_sample =
            prepared.sampled() && std::any_of(screened.begin(), screened.end(), [&](auto r) {
              return !std::binary_search(prepared.sample().query_rows.begin(),
                                         prepared.sample().query_rows.end(), r);
            });
        if (!expected.pass || off_sample) ++expected_fallbacks;
        auto const got = prepared.judge(out);
        CHECK(got.pass == expected.pass);
        CHECK(got.summary == expected.summary);
      }
      // Passing outputs were judged from the cache (no fallback); the check above is not vacuous: some pass,
      // some fail.
      CHECK(prepared.fallbacks() == expected_fallbacks);
      CHECK(expected_fallbacks < outputs.size());
      CHECK(expected_fallbacks > 0);
    }
}

TEST_CASE("the screen flags exactly the rows numerics' screen flags", "[tuner][tune]") {
  auto p = awkward(true);
  auto const in = numerics::gpu::family_inputs(p, InputFamily::normal, 9);
  auto const recipe = fl::numerics::recipe_for(p.dtype);
  auto out = standard_attention(p, in);
  fl::numerics::CheckOptions options;
  options.claimed = p.dtype;
  options.sample_rows = 16;
  options.cross_check_baseline = false;
  auto count = [&](device::HostOutputs const& o) {
    return fl::numerics::run_check(numerics::gpu::to_attention_inputs(p, in),
                                   numerics::gpu::to_attention_outputs(o), options)
        .screened_rows;
  };
  CHECK(screened_rows(p.shape, in.v, out, recipe).empty());
  CHECK(count(out) == 0);
  out.o[200 * 64 + 1] = 50.0f;  // far outside the range of V
  out.o[300 * 64 + 2] = std::numeric_limits<float>::infinity();
  out.lse[10] = std::numeric_limits<float>::quiet_NaN();
  auto const rows = screened_rows(p.shape, in.v, out, recipe);
  CHECK(rows == std::vector<std::size_t>{10, 200, 300});
  CHECK(count(out) == rows.size());
}

namespace {

double seconds_of(auto&& work) {
  auto const start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A kernel-like output that passes: the reference, rounded to the dtype, on the sampled rows; elsewhere V's
// first key row of the head (every query row sees key 0, causal or not: inside the range of V, so the screen
// of every row flags nothing, as for a correct kernel; 0 would be outside it for a causal row that sees one
// key).
device::HostOutputs passing_output(PreparedCheck const& check) {
  auto const& p = check.problem();
  auto const ref =
      fl::numerics::reference_sampled(numerics::gpu::to_attention_inputs(p, check.inputs()), check.sample());
  device::HostOutputs out;
  std::size_t const d = std::size_t(p.shape.head_dim);
  std::size_t const rows = fl::numerics::query_rows(p.shape);
  std::size_t const n_q = std::size_t(p.shape.seqlen_q), n_k = std::size_t(p.shape.seqlen_k);
  std::size_t const group = std::size_t(p.shape.heads_q / p.shape.heads_kv);
  out.o.resize(rows * d);
  out.lse.assign(rows, 0.0f);
  for (std::size_t row = 0; row < rows; ++row) {
    std::size_t const head_kv = row / n_q / group;  // (B, H_q) flattened -> (B, H_kv)
    for (std::size_t e = 0; e < d; ++e)
      out.o[row * d + e] = fl::numerics::round_to(p.dtype, check.inputs().v[head_kv * n_k * d + e]);
  }
  for (std::size_t t = 0; t < ref.sample.query_rows.size(); ++t) {
    std::size_t const row = ref.sample.query_rows[t];
    for (std::size_t e = 0; e < d; ++e)
      out.o[row * d + e] = fl::numerics::round_to(p.dtype, float(ref.o[t * d + e]));
    out.lse[row] = float(ref.lse[t]);
  }
  return out;
}

}  // namespace

// Not part of CI ([.]): the CPU cost of verifying one candidate at the H200 tuning shape (b4 h16 n4096 d128
// bf16), before (inputs regenerated, reference recomputed per candidate, as GpuEvaluator did) and after the
// reference cache. Run: build/bin/test_tuner "[cost]"; the numbers are in tuner/README.md. Another headline
// shape: FA_COST_SHAPE="N D full|causal" (experiments/tuner/README.md's grid costs).
TEST_CASE("verification cost of one candidate before and after the reference cache", "[.][cost]") {
  int n = 4096, d = 128;
  char mask[8] = "full";
  if (char const* shape = std::getenv("FA_COST_SHAPE"))
    REQUIRE(std::sscanf(shape, "%d %d %7s", &n, &d, mask) == 3);
  Problem big = headline_problem(n, d, std::string(mask) == "causal", Precision::bf16, Direction::forward);
  Problem small = big;
  small.shape = {1, 2, 2, 193, 257, d, big.shape.causal, 0.0};  // the evaluator's awkward problem
  constexpr std::size_t kTimedRows = 256;
  constexpr std::uint64_t kSeed = 20261129;

  device::HostInputs small_inputs;
  double const small_inputs_s =
      seconds_of([&] { small_inputs = numerics::gpu::family_inputs(small, InputFamily::normal, 1); });
  device::HostInputs big_inputs;
  double const big_inputs_s = seconds_of([&] { big_inputs = numerics::gpu::make_normal_inputs(big, kSeed); });
  std::optional<PreparedCheck> small_check, big_check;
  double const prepare_s = seconds_of([&] {
    small_check.emplace(small, small_inputs, 0, 1);
    big_check.emplace(big, big_inputs, kTimedRows, kSeed);
  });
  auto const small_out = standard_attention(small, small_inputs);
  auto const big_out = passing_output(*big_check);

  numerics::gpu::Verdict before_small, before_big, after_small, after_big;
  double const before_s = seconds_of([&] {
    before_small = numerics::gpu::judge_forward(small, small_inputs, small_out, 0, 1);
    before_big = numerics::gpu::judge_forward(big, big_inputs, big_out, kTimedRows, kSeed);
  });
  double const after_s = seconds_of([&] {
    after_small = small_check->judge(small_out);
    after_big = big_check->judge(big_out);
  });
  CHECK(before_small.pass);
  CHECK(before_big.pass);
  CHECK(after_small.summary == before_small.summary);
  CHECK(after_big.summary == before_big.summary);
  CHECK(big_check->fallbacks() == 0);
  std::printf(
      "verification of one candidate (%s, %zu sampled rows; small problem %s):\n"
      "  before: %.2f s per candidate = inputs %.2f s (timed) + %.2f s (small) + checks %.2f s\n"
      "  after:  %.3f s per candidate; once per run: inputs %.2f s + references and bounds %.2f s\n",
      describe(big).c_str(), big_check->sample().query_rows.size(), describe(small).c_str(),
      big_inputs_s + small_inputs_s + before_s, big_inputs_s, small_inputs_s, before_s, after_s,
      big_inputs_s + small_inputs_s, prepare_s);
}
