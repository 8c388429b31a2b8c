// flash_decode on the GPU, judged by numerics' float64 reference and tolerance model over every input
// family at decode shapes: n_q 1..16 against n_k up to 32k, GQA groups 1..8 (packed rows that fill one,
// several or a partial 16-row tile), tails in n_k, causal with fully masked rows (n_q > n_k), the default
// split counts and forced ones (more partials than key blocks: empty partials); every forward mutant is
// caught. Skipped where there is no GPU.
#include <catch2/catch.hpp>

#include "device/families/families.hpp"
#include "runtime/device.hpp"
#include "tests/kernels_src/edge_check.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;

namespace {

// (b, h_q, h_kv, n_q, n_k): each a decode shape with one edge.
std::vector<Problem> decode_problems(int d, bool causal, Precision dtype) {
  std::vector<Problem> out;
  for (auto [b, hq, hkv, nq, nk] : std::vector<std::array<int, 5>>{
           {1, 8, 2, 1, 4097},   // n_q = 1, GQA 4, tail
           {2, 4, 4, 3, 1000},   // no GQA, b 2
           {1, 6, 1, 7, 333},    // 42 packed rows
           {1, 2, 2, 16, 12},    // n_q > n_k
           {1, 8, 1, 16, 32768}  // GQA 8, 128 rows
       }) {
    Problem p;
    p.shape = {b, hq, hkv, nq, nk, d, causal, 0.0};
    p.dtype = dtype;
    out.push_back(p);
  }
  return out;
}

bool passes(std::vector<std::string> const& mutants, int d, bool causal, Precision dtype,
            std::optional<int> splits = std::nullopt) {
  FlashDecodeFamily const f;
  auto const problems = decode_problems(d, causal, dtype);
  auto config = f.default_config(problems.back());
  if (splits) config["kSplits"] = *splits;
  return test::passes_problems(f, mutants, problems, config);
}

}  // namespace

// One section per head dim and dtype, so that a short device call can run one: -c "d128 bf16".
TEST_CASE("flash_decode default configs are correct at decode shapes", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (int d : {64, 128, 256})
    for (auto dtype : {Precision::fp16, Precision::bf16})
      DYNAMIC_SECTION("d" << d << " " << common::name(dtype)) {
        for (bool causal : {false, true}) {
          INFO("d" << d << (causal ? " causal " : " full ") << common::name(dtype));
          CHECK(passes({}, d, causal, dtype));
        }
      }
}

TEST_CASE("flash_decode is correct for every split count", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (int splits : {1, 3, 16, 128}) {
    INFO("kSplits " << splits);
    CHECK(passes({}, 128, true, Precision::bf16, splits));
  }
}

TEST_CASE("flash_decode forward mutants are caught by the input families", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (auto const& c : test::forward_mutant_cases()) {
    INFO(c.switch_name);
    CHECK_FALSE(passes({c.switch_name}, 64, c.causal, Precision::bf16, 4));
  }
}
