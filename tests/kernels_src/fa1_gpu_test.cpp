// fa1 on the GPU: the defaults and a spread of the space (one chunk per key block and eight, 1 and 2 row
// tiles per warp, 4 and 8 warps, key blocks longer than n_k) on the small awkward problems (odd n, tails,
// causal with fully masked rows, n_q != n_k both ways, GQA) over every input family, judged by numerics'
// reference and tolerance model; every forward mutant is caught. Reported as skipped where there is no GPU.
#include <catch2/catch.hpp>

#include "device/families/families.hpp"
#include "runtime/device.hpp"
#include "tests/kernels_src/edge_check.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;

namespace {

bool passes_edge_problems(std::vector<std::string> const& mutants, int d, bool causal, Precision dtype,
                          Config const* override_config = nullptr) {
  Fa1Family const f;
  return test::passes_edge_problems(f, mutants, d, causal, dtype, override_config);
}

Config fa1_config(int block_m, int block_n, int chunk_n, int warps) {
  return {{"kBlockM", block_m}, {"kBlockN", block_n}, {"kChunkN", chunk_n}, {"kNWarps", warps}};
}

}  // namespace

TEST_CASE("fa1 default configs are correct on awkward problems", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  test::for_each_16bit_case(
      [](int d, bool causal, Precision dtype) { CHECK(passes_edge_problems({}, d, causal, dtype)); });
}

TEST_CASE("fa1 chunked key blocks, warp layouts and block sizes are correct", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  struct Case {
    int d;
    Config config;
  };
  std::vector<Case> const cases = {
      {64, fa1_config(128, 64, 64, 4)},    // one chunk per key block, 2 row tiles per warp
      {64, fa1_config(64, 256, 32, 4)},    // eight chunks, longer than most n_k of the problems
      {128, fa1_config(64, 64, 32, 4)},    // 1 row tile per warp, two chunks
      {128, fa1_config(128, 256, 32, 8)},  // eight chunks, 8 warps
      {256, fa1_config(128, 64, 32, 8)},   // d256 with 8 warps
      {256, fa1_config(64, 128, 64, 4)},   // d256, two 64-key chunks
  };
  Fa1Family const f;
  for (auto const& c : cases)
    for (bool causal : {false, true}) {
      auto const p = headline_problem(1024, c.d, causal, Precision::bf16, Direction::forward);
      REQUIRE_FALSE(f.violates(c.config, p));
      INFO("d" << c.d << (causal ? " causal " : " full ") << to_string(c.config));
      CHECK(passes_edge_problems({}, c.d, causal, Precision::bf16, &c.config));
    }
}

TEST_CASE("fa1 forward mutants are caught by the input families", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (auto const& c : test::forward_mutant_cases()) {
    INFO(c.switch_name);
    CHECK_FALSE(passes_edge_problems({c.switch_name}, 64, c.causal, Precision::bf16));
  }
}
