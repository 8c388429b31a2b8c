// The device problem's sizes: what a size check compares with free memory.
#include <catch2/catch.hpp>

#include "device/run/device_problem.hpp"
#include "tests/support/small_fp8_problem.hpp"

using namespace fl;
using namespace fl::device;
using common::Fp8Scaling;
using common::Precision;

TEST_CASE("an FP8 device problem needs one byte per Q, K, V element and two per O element", "[device][fp8]") {
  auto const fp8 = test::small_fp8_problem(Precision::fp8_e4m3, Fp8Scaling::per_tensor);
  auto bf16 = fp8;
  bf16.dtype = Precision::bf16;
  auto const& s = fp8.shape;
  std::size_t const fp8_bytes = device::DeviceProblem::bytes_needed(fp8, {});
  std::size_t const bf16_bytes = device::DeviceProblem::bytes_needed(bf16, {});
  // Q, K, V: one byte saved per element; the descale arrays (one float per row at most) added.
  CHECK(bf16_bytes - fp8_bytes ==
        s.q_elements() + 2 * s.kv_elements() - sizeof(float) * (s.lse_elements() + 2 * s.kv_elements() / 64));
}
