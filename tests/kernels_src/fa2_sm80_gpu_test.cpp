// fa2_sm80 on the GPU: default configs on small awkward problems (odd n, causal with fully masked rows,
// n_q != n_k, GQA) over every numerics input family, judged by numerics' reference and tolerance model;
// and every forward mutant is caught by at least one of them. Reported as skipped where there is no GPU.
#include <catch2/catch.hpp>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
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
                          Config const* override_config = nullptr) {
  Fa2Sm80Family const f;
  return test::passes_edge_problems(f, mutants, d, causal, dtype, override_config);
}

}  // namespace

TEST_CASE("fa2_sm80 default configs are correct on awkward problems", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  test::for_each_16bit_case(
      [](int d, bool causal, Precision dtype) { CHECK(passes_edge_problems({}, d, causal, dtype)); });
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
