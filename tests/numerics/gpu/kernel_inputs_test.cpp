// The seeded normal inputs our kernels are checked and timed on (numerics/gpu/kernel_inputs.hpp): the same
// values for a seed whatever the thread count, independent streams per tensor and chunk, never zeros.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "device/run/device_problem.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/gpu/kernel_tensors.hpp"
#include "numerics/input_families.hpp"
#include "tests/numerics/test_inputs.hpp"

using namespace fl;
using namespace fl::device;
using fl::common::Precision;

TEST_CASE("normal inputs are the same for a seed, drawn chunk by chunk from independent streams",
          "[numerics][kernel_inputs]") {
  // 2 x 8 x 300 x 64 = 307200 elements a tensor: five chunks of 2^16, so the threads draw several.
  fl::common::AttentionShape shape;
  shape.batch = 2;
  shape.heads_q = shape.heads_kv = 8;
  shape.seqlen_q = shape.seqlen_k = 300;
  shape.head_dim = 64;
  Problem const problem(shape, Precision::bf16, Direction::backward);
  auto const a = numerics::gpu::make_normal_inputs(problem, 11);
  auto const b = numerics::gpu::make_normal_inputs(problem, 11);
  CHECK(a.dtype == Precision::bf16);  // tagged with the storage precision they are exact in
  CHECK(a.q == b.q);
  CHECK(a.d_o == b.d_o);
  CHECK(numerics::gpu::make_normal_inputs(problem, 12).k != a.k);
  CHECK(a.k != a.v);  // each tensor its own streams
  std::size_t const chunk = std::size_t{1} << 16;
  REQUIRE(a.k.size() > 2 * chunk);
  CHECK(std::vector<float>(a.k.begin(), a.k.begin() + 64) !=
        std::vector<float>(a.k.begin() + chunk, a.k.begin() + chunk + 64));  // chunks are not repeats
  double sum = 0, sum_sq = 0;
  std::size_t zeros = 0;
  for (float x : a.v) {
    sum += x;
    sum_sq += double(x) * x;
    zeros += x == 0.0f;
  }
  CHECK(zeros == 0);  // never zeros
  double const mean = sum / double(a.v.size()), var = sum_sq / double(a.v.size()) - mean * mean;
  CHECK(std::abs(mean) < 0.01);
  CHECK(std::abs(var - 1.0) < 0.01);
}

TEST_CASE("inputs made for one precision are tagged with it, and a problem of another refuses them",
          "[numerics][kernel_inputs]") {
  fl::common::AttentionShape shape;
  shape.batch = 1;
  shape.heads_q = shape.heads_kv = 2;
  shape.seqlen_q = shape.seqlen_k = 70;
  shape.head_dim = 64;
  Problem fp16(shape, Precision::fp16);
  auto const inputs = numerics::gpu::make_normal_inputs(fp16, 3);
  CHECK(inputs.dtype == Precision::fp16);
  Problem e4m3(shape, Precision::fp8_e4m3);
  CHECK(numerics::gpu::make_normal_inputs(e4m3, 3).dtype == Precision::bf16);  // FP8 kernels read bf16
  auto family_problem = fp16;
  CHECK(numerics::gpu::family_inputs(family_problem, numerics::InputFamily::all_negative, 1).dtype ==
        Precision::fp16);

  // fp16 values handed to a bf16 problem: refused before anything is allocated (no GPU needed), in the
  // "input" stage, naming both precisions; the upload would have rounded them to other numbers.
  Problem bf16(shape, Precision::bf16);
  auto const refused = DeviceProblem::create(bf16, inputs, {}, nullptr, nullptr);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().stage == "input");
  CHECK_THAT(refused.error().message, Catch::Contains("exact in fp16") && Catch::Contains("stores bf16"));
}

TEST_CASE("a forward is recognised as the reference's on sampled rows, and one changed element is not",
          "[numerics][kernel_inputs]") {
  Problem const problem(numerics::test::make_shape(1, 2, 2, 96, 96, 32, true), Precision::fp16,
                        Direction::backward);
  auto const inputs = numerics::gpu::make_normal_inputs(problem, 3);
  auto const attention = numerics::gpu::to_attention_inputs(problem, inputs);
  REQUIRE(attention.has_backward());  // dO present: the check reads only O and LSE
  std::vector<std::size_t> const rows = {0, 50, 95, 130, 191};
  std::size_t const d = 32;
  auto const reference = numerics::gpu::reference_forward(problem, inputs);
  CHECK(numerics::gpu::is_reference_forward_on(problem, attention, rows, reference));

  auto forward = reference;
  forward.o[130 * d + 7] = -forward.o[130 * d + 7] + 1.0f;  // a sampled row's O
  CHECK_FALSE(numerics::gpu::is_reference_forward_on(problem, attention, rows, forward));
  forward = reference;
  forward.lse[50] += 1.0f;  // a sampled row's LSE
  CHECK_FALSE(numerics::gpu::is_reference_forward_on(problem, attention, rows, forward));
  forward = reference;
  forward.o[60 * d] += 1.0f;  // a row outside the sample is not looked at, by design
  CHECK(numerics::gpu::is_reference_forward_on(problem, attention, rows, forward));
}
