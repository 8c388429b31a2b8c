// The host side of FP8 problems: codes and descales as numerics quantises them, the incoherent rotation,
// bf16 P.V and the device problem's sizes with it.
#include <catch2/catch.hpp>

#include <cuda_fp8.h>

#include <cmath>

#include "device/run/device_problem.hpp"
#include "device/run/fp8_operands.hpp"
#include "numerics/fp8_quantization.hpp"
#include "numerics/gpu/kernel_fp8_operands.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/precision.hpp"
#include "tests/support/small_fp8_problem.hpp"

using namespace fl;
using namespace fl::device;
using common::Fp8Scaling;
using common::Precision;

namespace {

float decode(std::uint8_t code, Precision format) {
  __nv_fp8_storage_t const s = code;
  __half_raw const h = __nv_cvt_fp8_to_halfraw(s, format == Precision::fp8_e5m2 ? __NV_E5M2 : __NV_E4M3);
  return __half2float(__half(h));
}

}  // namespace

TEST_CASE("FP8 operands: codes times descale reproduce numerics' dequantised values", "[numerics][fp8]") {
  for (auto dtype : {Precision::fp8_e4m3, Precision::fp8_e5m2})
    for (auto scaling : {Fp8Scaling::per_tensor, Fp8Scaling::per_block}) {
      auto const p = test::small_fp8_problem(dtype, scaling);
      auto const in = numerics::gpu::make_normal_inputs(p, 5);
      // Inputs are bf16 values, not FP8 ones: the quantisation is the kernel host's job.
      bool any_not_fp8 = false;
      for (float x : in.k) any_not_fp8 = any_not_fp8 || numerics::round_to(dtype, x) != x;
      CHECK(any_not_fp8);
      auto const ops = numerics::gpu::quantize_fp8_operands(p, in);
      CHECK(ops.per_tensor == (scaling == Fp8Scaling::per_tensor));
      std::vector<double> k(in.k.begin(), in.k.end());
      auto const ref = numerics::quantize_fp8(k, 2 * 2, 70, 64, dtype, scaling, 32);
      REQUIRE(ops.k.size() == ref.codes.size());
      REQUIRE(ops.k_descale.size() ==
              (scaling == Fp8Scaling::per_tensor ? 1u : 2u * 2u * 3u));  // ceil(70/32)
      for (std::size_t i = 0; i < ops.k.size(); ++i) REQUIRE(decode(ops.k[i], dtype) == ref.codes[i]);
      CHECK(ops.k_descale == ref.descales);
      CHECK(ops.q_descale.size() == (scaling == Fp8Scaling::per_tensor ? 1u : 2u * 4u * 4u));  // ceil(100/32)
    }
}

TEST_CASE("FP8 operands: the incoherent rotation changes Q and K codes but not V", "[numerics][fp8]") {
  auto p = test::small_fp8_problem(Precision::fp8_e4m3, Fp8Scaling::per_tensor);
  auto const in = numerics::gpu::make_normal_inputs(p, 9);
  auto const plain = numerics::gpu::quantize_fp8_operands(p, in);
  p.fp8.incoherent = true;
  p.fp8.incoherent_seed = 3;
  auto const rotated = numerics::gpu::quantize_fp8_operands(p, in);
  CHECK(rotated.q != plain.q);
  CHECK(rotated.k != plain.k);
  CHECK(rotated.v == plain.v);
  p.dtype = Precision::bf16;
  CHECK_THROWS_AS(numerics::gpu::quantize_fp8_operands(p, in), std::invalid_argument);
}

TEST_CASE("FP8 operands with bf16 P.V: V as its bf16 bits, descales of one, Q and K unchanged",
          "[numerics][fp8]") {
  for (auto scaling : {Fp8Scaling::per_tensor, Fp8Scaling::per_block}) {
    auto p = test::small_fp8_problem(Precision::fp8_e4m3, scaling);
    auto const in = numerics::gpu::make_normal_inputs(p, 7);
    auto const plain = numerics::gpu::quantize_fp8_operands(p, in);
    p.fp8.bf16_pv = true;
    auto const ops = numerics::gpu::quantize_fp8_operands(p, in);
    CHECK(ops.v.empty());
    CHECK(ops.v_bf16 ==
          device::encode_16bit(in.v, Precision::bf16));  // the inputs are bf16 values: V exactly
    CHECK(ops.v_descale == std::vector<float>(plain.v_descale.size(), 1.0f));
    CHECK(ops.q == plain.q);
    CHECK(ops.k == plain.k);
    CHECK(ops.k_descale == plain.k_descale);
    // The device problem holds V's two bytes an element (Q and K stay one).
    Problem one_byte = p;
    one_byte.fp8.bf16_pv = false;
    CHECK(device::DeviceProblem::bytes_needed(p, {}) - device::DeviceProblem::bytes_needed(one_byte, {}) ==
          p.shape.kv_elements());
  }
}
