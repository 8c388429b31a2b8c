// fa2_sm80 on the GPU: default configs on small awkward problems (odd n, causal with fully masked rows,
// n_q != n_k, GQA) over every numerics input family, judged by numerics' reference and tolerance model;
// and every forward mutant is caught by at least one of them. Reported as skipped where there is no GPU.
#include <catch2/catch.hpp>

#include "runtime/device.hpp"
#include "tests/kernels_src/kernels_support.hpp"
#include "tuner/compile/compile_config.hpp"
#include "tuner/families/fa2_sm80.hpp"
#include "tuner/run/benchmark.hpp"

using namespace fl;
using namespace fl::tuner;
using numerics::Precision;

namespace {

// True when every edge problem passes; the first failure is reported.
bool passes_edge_problems(std::vector<std::string> const& mutants, int d, bool causal, Precision dtype,
                          Config const* override_config = nullptr) {
  Fa2Sm80Family const f;
  auto const base = headline_problem(1024, d, causal, dtype, Direction::forward);
  auto const config = override_config ? *override_config : f.default_config(base);
  auto const program =
      compile_family_config(f, config, base, {runtime::TargetArch::sm_90a, test::kernels_dir(), mutants});
  INFO((program.ok() ? std::string() : program.error().one_line() + "\n" + program.error().log));
  REQUIRE(program);
  for (auto const input_family : numerics::all_input_families())
    for (auto const& p : test::edge_problems(d, causal, dtype)) {
      if (!family_applies(input_family, causal)) continue;
      CheckOptions options;
      options.input_family = input_family;
      auto const check = check_config(f, config, p, program.value(), options);
      REQUIRE(check);
      if (!check->pass) {
        UNSCOPED_INFO(describe(p) << " " << numerics::name(input_family) << ": " << check->summary);
        return false;
      }
    }
  return true;
}

}  // namespace

TEST_CASE("fa2_sm80 default configs are correct on awkward problems", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto dtype : {Precision::fp16, Precision::bf16}) {
        INFO("d" << d << (causal ? " causal " : " full ") << numerics::name(dtype));
        CHECK(passes_edge_problems({}, d, causal, dtype));
      }
}

TEST_CASE("fa2_sm80 FA-1 warp layout, Q in registers and register epilogue are correct", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Config const c{{"kBlockM", 64}, {"kBlockN", 64}, {"kNWarps", 4},      {"kStages", 2},
                 {"kWarpsN", 2},  {"kQInRegs", 1}, {"kEpilogueSmem", 0}};
  for (bool causal : {false, true}) CHECK(passes_edge_problems({}, 64, causal, Precision::bf16, &c));
  Config const deep{{"kBlockM", 128}, {"kBlockN", 64}, {"kNWarps", 8},      {"kStages", 3},
                    {"kWarpsN", 1},   {"kQInRegs", 0}, {"kEpilogueSmem", 1}};
  for (bool causal : {false, true}) CHECK(passes_edge_problems({}, 128, causal, Precision::fp16, &deep));
}

TEST_CASE("fa2_sm80 forward mutants are caught by the input families", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (auto const& c : test::forward_mutant_cases()) {
    INFO(c.switch_name);
    CHECK_FALSE(passes_edge_problems({c.switch_name}, 64, c.causal, Precision::bf16));
  }
}
