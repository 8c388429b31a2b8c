// FP8 bounds on rows whose maximum rises late (the inputs on which the unrescaled and stale-max bugs act):
// the bound must stay near the error of correct FP8 attention, so that a missing rescale of O fails. Before
// the weight uncertainty used the exact second moment of e^delta - 1 (numerics/README.md, "Weights"), the
// e5m2 bound on these rows was ~100x the RMS error of standard attention in e5m2 and an unrescaled-o output
// 2-3 away from the reference passed.
#include <catch2/catch.hpp>

#include <cmath>

#include "numerics/check.hpp"
#include "numerics/diagnosis/fa_check_diagnoser.hpp"
#include "numerics/emulator/emulator.hpp"
#include "numerics/precision.hpp"
#include "numerics/seeded_random.hpp"
#include "numerics/standard_attention.hpp"

using namespace fl::numerics;
namespace emu = fl::numerics::emulator;
namespace mut = fl::numerics::mutants;

namespace {

// Q, K, V ~ N(0, 1) plus a direction u: key j gets ramp_j u with ramp_j rising from 0 to 3 sqrt(d) along the
// sequence, every query 0.8 u, so each row's largest scores sit in its last key blocks. Rounded to bf16
// (an FP8 kernel quantises bf16 inputs itself). The same family as the independent corpus's
// rising_max_inputs (tests/numerics/diagnosis/independent_corpus.py).
AttentionInputs rising_max_inputs(std::uint64_t seed) {
  AttentionInputs in;
  in.shape.batch = 2;
  in.shape.heads_q = in.shape.heads_kv = 1;
  in.shape.seqlen_q = 48;
  in.shape.seqlen_k = 96;
  in.shape.head_dim = 64;
  std::size_t const d = 64;
  SeededRandom rng(seed);
  std::vector<double> u(d);
  double norm = 0.0;
  for (double& x : u) {
    x = rng.normal();
    norm += x * x;
  }
  for (double& x : u) x /= std::sqrt(norm);
  auto fill = [&](std::vector<double>& t, std::size_t rows, std::size_t n, double ramp_top, double shift) {
    t.resize(rows * d);
    for (std::size_t r = 0; r < rows; ++r) {
      double const ramp = ramp_top * double(r % n) / double(n - 1) + shift;
      for (std::size_t e = 0; e < d; ++e)
        t[r * d + e] = double(round_to(fl::common::Precision::bf16, float(rng.normal() + ramp * u[e])));
    }
  };
  std::size_t const nq = 48, nk = 96, b = 2;
  fill(in.q, b * nq, nq, 0.0, 0.8);
  fill(in.k, b * nk, nk, 3.0 * std::sqrt(double(d)), 0.0);
  fill(in.v, b * nk, nk, 0.0, 0.0);
  return in;
}

CheckResult check(AttentionInputs const& in, AttentionOutputs const& out, fl::common::Precision p) {
  CheckOptions options;
  options.claimed = p;
  options.threads = 1;
  return run_check(in, out, options, diagnosis::make_fa_check_diagnoser({}, 1));
}

}  // namespace

TEST_CASE("FP8 rising-max rows: unrescaled-o fails and is named, correct outputs pass",
          "[numerics][tolerance]") {
  for (fl::common::Precision p : {fl::common::Precision::fp8_e5m2, fl::common::Precision::fp8_e4m3}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      INFO(name(p) << " seed " << seed);
      AttentionInputs const in = rising_max_inputs(seed);
      emu::EmulatorConfig config{p, {16, 32}, emu::LoopOrder::fa2, {}, 1};

      CheckResult const correct = check(in, emu::emulate(in, config), p);
      CHECK(correct.pass);
      CHECK(correct.diagnosis.empty());
      CheckResult const standard = check(in, standard_attention(in, recipe_for(p), 1), p);
      CHECK(standard.pass);
      // The bound's RMS stays within 40x the RMS error of standard attention in the same precision
      // (measured 20-30x; it was 108x in e5m2 on these rows; bf16 on N(0, 1) inputs sits at 8-13x).
      REQUIRE(correct.baseline.done);
      INFO("rms bound / rmse of standard attention " << correct.baseline.bound_over_error[0]);
      CHECK(correct.baseline.bound_over_error[0] < 40.0);

      config.mutants = mut::MutantSet::only(mut::MutantId::unrescaled_o);
      CheckResult const buggy = check(in, emu::emulate(in, config), p);
      CHECK_FALSE(buggy.pass);
      REQUIRE_FALSE(buggy.diagnosis.empty());
      CHECK(buggy.diagnosis.front().id == "unrescaled-o");
    }
  }
}
