// fa3_sm90 on the GPU: default configs and each mechanism switched off, on small awkward problems (odd n,
// tails, causal with fully masked rows, n_q != n_k, GQA) over every numerics input family, judged by
// numerics' reference and tolerance model; every forward mutant is caught. Skipped where there is no GPU.
#include <catch2/catch.hpp>

#include "runtime/device.hpp"
#include "tests/kernels_src/edge_check.hpp"
#include "tests/kernels_src/kernels_support.hpp"
#include "tuner/compile/compile_config.hpp"
#include "tuner/families/fa3_sm90.hpp"
#include "tuner/run/benchmark.hpp"

using namespace fl;
using namespace fl::tuner;
using numerics::Precision;

namespace {

bool passes_edge_problems(std::vector<std::string> const& mutants, int d, bool causal, Precision dtype,
                          Config const* override_config = nullptr) {
  Fa3Sm90Family const f;
  return test::passes_edge_problems(f, mutants, d, causal, dtype, override_config);
}

}  // namespace

TEST_CASE("fa3_sm90 default configs are correct on awkward problems", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto dtype : {Precision::fp16, Precision::bf16}) {
        INFO("d" << d << (causal ? " causal " : " full ") << numerics::name(dtype));
        CHECK(passes_edge_problems({}, d, causal, dtype));
      }
}

TEST_CASE("fa3_sm90 is correct with each mechanism switched off", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa3Sm90Family const f;
  auto const base = f.default_config(headline_problem(1024, 128, false, Precision::bf16, Direction::forward));
  for (auto [name, value] : std::vector<std::pair<char const*, int>>{
           {"kPingPong", 0}, {"kIntraWgOverlap", 0}, {"kPersistent", 0}, {"kStages", 3}, {"kConsumers", 1}}) {
    Config c = base;
    c["kBlockN"] = 128;
    c[name] = value;
    if (c["kConsumers"] == 1) c["kPingPong"] = 0;
    INFO(to_string(c));
    for (bool causal : {false, true}) CHECK(passes_edge_problems({}, 128, causal, Precision::bf16, &c));
  }
}

TEST_CASE("fa3_sm90 forward mutants are caught by the input families", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (auto const& c : test::forward_mutant_cases()) {
    INFO(c.switch_name);
    CHECK_FALSE(passes_edge_problems({c.switch_name}, 64, c.causal, Precision::bf16));
  }
}
