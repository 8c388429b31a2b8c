#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>

#include "numerics/judge.hpp"
#include "numerics/reference.hpp"
#include "numerics/standard_attention.hpp"
#include "numerics/tolerance.hpp"
#include "numerics/tolerance_sweep.hpp"
#include "tests/numerics/test_inputs.hpp"

using namespace fl::numerics;
using fl::numerics::test::make_shape;
using fl::numerics::test::random_inputs;

namespace {
AttentionOutputs run_standard(AttentionInputs const& in, PrecisionRecipe const& r) {
  return standard_attention(in, r, 1);
}
}  // namespace

TEST_CASE("no false positives: standard attention in fp16, bf16, fp8 on every family over 1000 seeds",
          "[numerics][tolerance]") {
  SweepOptions options;
  options.seeds = 1000;
  SweepResult const r = run_tolerance_sweep(run_standard, options);
  INFO("worst: " << r.worst_case);
  INFO("first failure: " << r.first_failure);
  std::cout << "tolerance sweep: " << r.runs << " runs, worst error/bound " << r.worst_ratio << " ("
            << r.worst_case << ")\n";
  CHECK(r.runs == 1000u * all_input_families().size() * 3u);
  CHECK(r.failing_runs == 0);
}
