// Every family's default config on the GPU, on the small awkward problems (odd n, fully masked causal
// rows, n_q != n_k, GQA), against the float64 reference. Skipped where there is no GPU.
#include <catch2/catch.hpp>

#include "device/compile/compile_config.hpp"
#include "device/families/registry.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "runtime/device.hpp"
#include "tests/kernels_src/kernels_support.hpp"
#include "tuner/run/benchmark.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using common::Precision;

TEST_CASE("every family's default config is correct on awkward problems", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (auto const& family : all_families())
    for (int d : {64, 128})
      for (bool causal : {false, true}) {
        // A backward family (fa2_sm80_bwd) refuses forward problems: run it on backward ones.
        auto base = headline_problem(1024, d, causal, Precision::bf16, Direction::forward);
        if (family->unsupported(base)) base.direction = Direction::backward;
        if (family->unsupported(base)) continue;  // FP8 families: fa2_fp8_gpu_test.cpp
        auto const config = family->default_config(base);
        auto const program = device::compile_family_config(
            *family, config, base, {runtime::TargetArch::sm_90a, test::kernels_dir(), {}});
        INFO(family->name() << " d" << d << (causal ? " causal" : " full"));
        INFO((program.ok() ? std::string() : program.error().one_line() + "\n" + program.error().log));
        REQUIRE(program);
        for (auto const input_family : numerics::all_input_families())
          for (auto p : test::edge_problems(d, causal, Precision::bf16)) {
            p.direction = base.direction;
            if (!numerics::gpu::family_applies(input_family, causal)) continue;
            CheckOptions options;
            options.input_family = input_family;
            auto const check = check_config(*family, config, p, program.value(), options);
            REQUIRE(check);
            INFO(describe(p) << " " << numerics::name(input_family) << ": " << check->summary);
            CHECK(check->pass);
          }
      }
}
