// fa2_fp8 on the GPU: the default config of every problem class (d 64 and 128, causal and not, e4m3 per
// tensor and per block, e5m2 per tensor) on the small awkward problems (odd n, fully masked causal rows,
// n_q != n_k, GQA) and every input family, judged by numerics' run_check at the FP8 claimed precision.
// Skipped where there is no GPU (the lead runs it on the H200: scripts/gpu.sh fp8).
#include <catch2/catch.hpp>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "runtime/device.hpp"
#include "tests/kernels_src/kernels_support.hpp"
#include "tuner/run/benchmark.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using common::Fp8Scaling;
using common::Precision;

TEST_CASE("fa2_fp8 default configs pass fa-check on every input family", "[gpu][kernels][fp8]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  auto const arch = runtime::arch_for_device(context->info().cc_major, context->info().cc_minor);
  REQUIRE(arch);
  Fa2Fp8Family const family;
  struct Variant {
    Precision dtype;
    Fp8Scaling scaling;
    bool incoherent;
  };
  for (auto const v : {Variant{Precision::fp8_e4m3, Fp8Scaling::per_tensor, false},
                       Variant{Precision::fp8_e4m3, Fp8Scaling::per_block, false},
                       Variant{Precision::fp8_e4m3, Fp8Scaling::per_tensor, true},
                       Variant{Precision::fp8_e5m2, Fp8Scaling::per_tensor, false}})
    for (int d : {64, 128})
      for (bool causal : {false, true}) {
        auto base = headline_problem(1024, d, causal, v.dtype, Direction::forward);
        base.fp8.scaling = v.scaling;
        base.fp8.incoherent = v.incoherent;
        base.fp8.incoherent_seed = 1;
        auto const config = family.default_config(base);
        auto const program =
            device::compile_family_config(family, config, base, {arch.value(), test::kernels_dir(), {}});
        INFO(describe(base) << " " << to_string(config));
        INFO((program.ok() ? std::string() : program.error().one_line() + "\n" + program.error().log));
        REQUIRE(program);
        for (auto const input_family : numerics::all_input_families())
          for (auto p : test::edge_problems(d, causal, v.dtype)) {
            if (!numerics::gpu::family_applies(input_family, causal)) continue;
            p.fp8 = base.fp8;
            CheckOptions options;
            options.input_family = input_family;
            auto const check = check_config(family, config, p, program.value(), options);
            INFO(describe(p) << " " << numerics::name(input_family));
            REQUIRE(check);
            INFO(check->summary);
            CHECK(check->pass);
          }
      }
}
