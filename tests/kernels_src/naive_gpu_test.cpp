// naive on the GPU against the float64 reference, on the awkward problems (odd n: padded rows of S and P,
// partial tiles; fully masked causal rows; n_q != n_k; GQA) over every input family: each GEMM config
// of its space (kNWarps x kStages) and each softmax width, fp32 S. 16-bit S (kScoreBits = 16,
// PyTorch's math path) rounds every scaled score to the input type: check_config judges it by the bound
// of 16-bit scores (the family's score_precision -> numerics::gpu::recipe_of), on every input family but
// one (fp16's near_dtype_max, below). Skipped where there is no GPU.
#include <catch2/catch.hpp>

#include "device/families/families.hpp"
#include "runtime/device.hpp"
#include "tests/kernels_src/edge_check.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;

namespace {

std::vector<Config> configs_to_check(NaiveFamily const& f, Problem const& p) {
  std::vector<Config> out;
  for (auto const& config : enumerate_space(f, p)) {
    bool const default_softmax = config.at("kSoftmaxThreads") == f.default_config(p).at("kSoftmaxThreads");
    bool const default_gemm = config.at("kNWarps") == f.default_config(p).at("kNWarps") &&
                              config.at("kStages") == f.default_config(p).at("kStages");
    if (config.at("kScoreBits") == 32 && (default_softmax || default_gemm)) out.push_back(config);
  }
  return out;
}

}  // namespace

// One section per head dim, so that a short device call can run one: -c d128.
TEST_CASE("naive configs are correct on awkward problems", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  NaiveFamily const f;
  for (int d : {64, 128, 256}) DYNAMIC_SECTION("d" << d) {
      for (bool causal : {false, true})
        for (auto dtype : {Precision::bf16, Precision::fp16}) {
          auto const base = headline_problem(1024, d, causal, dtype, Direction::forward);
          auto problems = test::edge_problems(d, causal, dtype);
          for (auto const& config : configs_to_check(f, base)) {
            if (dtype == Precision::fp16 && config != f.default_config(base)) continue;
            INFO(to_string(config) << " d" << d << (causal ? " causal " : " full ") << common::name(dtype));
            CHECK(test::passes_problems(f, {}, problems, config));
          }
        }
    }
}

// near_dtype_max in fp16 is reported, not judged: its |Q|, |K| near 2^15 give scores of order d 2^30 scale,
// past fp16's 65504, so S stored in fp16 is inf and the softmax NaN; no bound applies to that (the CPU
// emulation does the same: tests/numerics/tolerance_scores_test.cpp leaves it out). bf16's range holds them.
TEST_CASE("naive with 16-bit S: correct by the bound of 16-bit scores on every input family",
          "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  NaiveFamily const f;
  for (int d : {64, 128})
    for (bool causal : {false, true})
      for (auto dtype : {Precision::bf16, Precision::fp16}) {
        auto const base = headline_problem(1024, d, causal, dtype, Direction::forward);
        auto config = f.default_config(base);
        config["kScoreBits"] = 16;
        auto const program = device::compile_family_config(
            f, config, base, {runtime::TargetArch::sm_90a, test::kernels_dir(), {}});
        INFO((program.ok() ? std::string() : program.error().one_line() + "\n" + program.error().log));
        REQUIRE(program);
        for (auto const input_family : numerics::all_input_families())
          for (auto const& p : test::edge_problems(d, causal, dtype)) {
            if (!numerics::gpu::family_applies(input_family, causal)) continue;
            tuner::CheckOptions options;
            options.input_family = input_family;
            auto const check = tuner::check_config(f, config, p, program.value(), options);
            REQUIRE(check);
            INFO(describe(p) << " " << numerics::name(input_family) << ": " << check->summary);
            if (dtype == Precision::fp16 && input_family == numerics::InputFamily::near_dtype_max)
              WARN("kScoreBits=16 " << describe(p)
                                    << " near_dtype_max (fp16 S overflows): " << check->summary);
            else
              CHECK(check->pass);
          }
      }
}
