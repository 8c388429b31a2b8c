// fa3_sm90_bwd on the GPU: the defaults (both dQ modes) on the awkward backward problems (odd n, tails,
// n_q != n_k both ways, causal rows with no visible key, GQA) over every numerics input family, judged
// against the float64 reference; the deterministic mode gives the same bits over 20 runs; the backward
// mutants are caught. Skipped where there is no GPU.
#include <catch2/catch.hpp>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "device/family_runner.hpp"
#include "device/run/device_problem.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "runtime/device.hpp"
#include "tests/kernels_src/edge_check.hpp"
#include "tests/kernels_src/kernels_support.hpp"
#include "tuner/run/benchmark.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using common::Precision;

namespace {

bool passes_edge_problems(std::vector<std::string> const& mutants, int d, bool causal, Precision dtype,
                          Config const* config = nullptr) {
  Fa3Sm90BwdFamily const f;
  return test::passes_edge_problems(f, mutants, d, causal, dtype, config, {}, Direction::backward);
}

// dQ, dK, dV of `runs` runs of one config on one problem's inputs.
std::vector<device::HostOutputs> rerun(Config const& config, Problem const& p,
                                       std::vector<std::string> const& mutants, int runs) {
  Fa3Sm90BwdFamily const f;
  auto const program = device::compile_family_config(
      f, config, p, {runtime::TargetArch::sm_90a, test::kernels_dir(), mutants});
  INFO((program.ok() ? std::string() : program.error().log));
  REQUIRE(program);
  auto const inputs = numerics::gpu::make_normal_inputs(p, 3);
  auto const forward = numerics::gpu::reference_forward(p, inputs);
  auto runner = FamilyRunner::load(f, config, p, program.value());
  REQUIRE(runner);
  std::vector<device::HostOutputs> out;
  for (int i = 0; i < runs; ++i) {
    auto dp = device::DeviceProblem::create(p, inputs, f.scratch(config, p), &forward);
    REQUIRE(dp);
    REQUIRE(runner->run(dp->params));
    auto host = dp->download(p);
    REQUIRE(host);
    out.push_back(host.value());
  }
  return out;
}

// 8 query blocks of 128 rows (and 16 of 64) per key block, GQA 4:1.
Problem rerun_problem(int d) {
  auto p = headline_problem(1024, d, true, Precision::bf16, Direction::backward);
  p.shape = {2, 8, 2, 1000, 1000, d, true, 0.0};
  return p;
}

}  // namespace

TEST_CASE("fa3_sm90_bwd defaults are correct on awkward problems", "[gpu][kernels][fa3_sm90_bwd]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  test::for_each_16bit_case(
      [](int d, bool causal, Precision dtype) { CHECK(passes_edge_problems({}, d, causal, dtype)); });
}

TEST_CASE("fa3_sm90_bwd deterministic mode and the other mechanisms are correct",
          "[gpu][kernels][fa3_sm90_bwd]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa3Sm90BwdFamily const f;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true}) {
      auto const c =
          f.reproducible_config(headline_problem(1024, d, causal, Precision::bf16, Direction::backward));
      INFO(to_string(c) << (causal ? " causal" : " full"));
      CHECK(passes_edge_problems({}, d, causal, Precision::bf16, &c));
    }
  auto base = f.default_config(headline_problem(1024, 128, false, Precision::bf16, Direction::backward));
  Config one = base;  // one consumer warpgroup (no register exchange), one stage
  one["kConsumers"] = 1;
  one["kBlockN"] = 64;
  one["kStages"] = 1;
  Config bulk = base;  // dQ by TMA bulk reduce-add
  bulk["kDqMode"] = 2;
  for (Config const* c : {&one, &bulk})
    for (bool causal : {false, true}) {
      INFO(to_string(*c) << (causal ? " causal" : " full"));
      CHECK(passes_edge_problems({}, 128, causal, Precision::bf16, c));
    }
}

TEST_CASE("fa3_sm90_bwd deterministic mode gives the same bits over 20 runs",
          "[gpu][kernels][fa3_sm90_bwd]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa3Sm90BwdFamily const f;
  for (int d : {64, 128}) {
    auto const p = rerun_problem(d);
    auto const config = f.reproducible_config(p);
    INFO(to_string(config));
    auto const runs = rerun(config, p, {}, 20);
    for (std::size_t i = 1; i < runs.size(); ++i) {
      CHECK(runs[i].dq == runs[0].dq);
      CHECK(runs[i].dk == runs[0].dk);
      CHECK(runs[i].dv == runs[0].dv);
    }
  }
}

TEST_CASE("fa3_sm90_bwd backward mutants are caught", "[gpu][kernels][fa3_sm90_bwd]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa3Sm90BwdFamily const f;
  auto const p = headline_problem(1024, 64, false, Precision::bf16, Direction::backward);
  auto const p128 = headline_problem(1024, 128, false, Precision::bf16, Direction::backward);
  Config bulk = f.default_config(p128);
  bulk["kDqMode"] = 2;
  for (auto const& [d, c] :
       {std::pair<int, Config>{64, f.default_config(p)}, {64, f.reproducible_config(p)}, {128, bulk}})
    for (std::string s :
         {"FA_MUTANT_BWD_MISSING_DELTA", "FA_MUTANT_BWD_DK_MISSING_SCALE", "FA_MUTANT_BWD_DQ_OVERWRITE"}) {
      INFO(to_string(c) << " " << s);
      CHECK_FALSE(passes_edge_problems({s}, d, false, Precision::bf16, &c));
    }
  // bwd-race (dQ reads dS^T before the other warpgroup has stored it): the deterministic mode's reruns
  // must differ from each other or from the race-free kernel's bits.
  auto const rp = rerun_problem(64);
  auto const config = f.reproducible_config(rp);
  auto const clean = rerun(config, rp, {}, 1);
  auto const racy = rerun(config, rp, {"FA_MUTANT_BWD_RACE"}, 10);
  bool differs = false;
  for (auto const& r : racy) differs = differs || r.dq != clean[0].dq;
  CHECK(differs);
}
