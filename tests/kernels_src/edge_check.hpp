#pragma once
// The families' [gpu] correctness check, one copy: a config (the family default when null), with
// `mutants` compiled in, judged on every edge problem (forward or backward, or the caller's problems) over
// every input family that applies; the first failure is reported. `fp8`: how FP8 operands are made (ignored
// for 16-bit).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "device/compile/compile_config.hpp"
#include "device/family.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "tests/kernels_src/kernels_support.hpp"
#include "tuner/run/benchmark.hpp"

namespace fl::test {

// `config` compiled once with `mutants` (for problems.front(): every problem has its head dim, mask and
// dtype), judged on every problem over every input family that applies.
inline bool passes_problems(device::Family const& f, std::vector<std::string> const& mutants,
                            std::vector<device::Problem> const& problems, device::Config const& config) {
  using namespace fl::device;
  using namespace fl::tuner;
  auto const program = device::compile_family_config(f, config, problems.front(),
                                                     {runtime::TargetArch::sm_90a, kernels_dir(), mutants});
  INFO((program.ok() ? std::string() : program.error().one_line() + "\n" + program.error().log));
  REQUIRE(program);
  bool const causal = problems.front().shape.causal;
  for (auto const input_family : numerics::all_input_families())
    for (auto const& p : problems) {
      if (!numerics::gpu::family_applies(input_family, causal)) continue;
      CheckOptions options;
      options.input_family = input_family;
      auto const check = check_config(f, config, p, program.value(), options);
      INFO((check.ok() ? std::string() : check.error().one_line()));
      REQUIRE(check);
      if (!check->pass) {
        UNSCOPED_INFO(to_string(config)
                      << " " << describe(p) << " " << numerics::name(input_family) << ": " << check->summary);
        return false;
      }
    }
  return true;
}

inline bool passes_edge_problems(device::Family const& f, std::vector<std::string> const& mutants, int d,
                                 bool causal, common::Precision dtype,
                                 device::Config const* override_config = nullptr,
                                 device::Fp8Options const& fp8 = {},
                                 device::Direction direction = device::Direction::forward) {
  using namespace fl::tuner;
  auto base = headline_problem(1024, d, causal, dtype, direction);
  base.fp8 = fp8;
  auto const config = override_config ? *override_config : f.default_config(base);
  auto problems = edge_problems(d, causal, dtype);
  for (auto& p : problems) {
    p.fp8 = fp8;
    p.direction = direction;
  }
  return passes_problems(f, mutants, problems, config);
}

// Every head dim x mask x 16-bit dtype, each named in a failure's message: the families' default checks
// (`check(d, causal, dtype)` holds the CHECKs).
template <typename Check>
void for_each_16bit_case(Check&& check) {
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto dtype : {common::Precision::fp16, common::Precision::bf16}) {
        INFO("d" << d << (causal ? " causal " : " full ") << common::name(dtype));
        check(d, causal, dtype);
      }
}

}  // namespace fl::test
