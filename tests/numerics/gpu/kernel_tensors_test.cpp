// numerics' float64 tensors <-> the tuner's float host tensors: values a dtype can hold pass unchanged both
// ways (what the GPU mutant runner relies on: the verifier must judge the numbers the kernel saw), and an
// empty row's LSE of -inf survives the trip back.
#include <catch2/catch.hpp>

#include <limits>

#include "numerics/gpu/kernel_tensors.hpp"
#include "numerics/precision.hpp"

using namespace fl;

TEST_CASE("attention inputs and outputs cross between float64 and the device's host tensors exactly",
          "[numerics]") {
  numerics::AttentionInputs in;
  in.shape = {1, 1, 1, 2, 2, 2, false, 0.0};
  // bf16 values: 1 + 2^-7 and 3 * 2^-20 are exact in bf16, so they must reach the device unchanged.
  double const exact = 1.0 + 0x1p-7, tiny = 3 * 0x1p-20;
  in.q = {exact, -tiny, 0.5, 2.0};
  in.k = {tiny, -exact, 4.0, -0.25};
  in.v = {1.0, 2.0, 3.0, -4.0};
  in.d_o = {1.0, 1.0, 1.0, 1.0};
  device::HostInputs const host = numerics::gpu::to_host_inputs(in, common::Precision::bf16);
  CHECK(host.dtype == common::Precision::bf16);
  CHECK(numerics::gpu::to_host_inputs(in, common::Precision::fp8_e4m3).dtype == common::Precision::bf16);
  REQUIRE(host.q.size() == in.q.size());
  for (std::size_t i = 0; i < in.q.size(); ++i) {
    CHECK(double(host.q[i]) == in.q[i]);
    CHECK(double(host.k[i]) == in.k[i]);
    CHECK(double(host.v[i]) == in.v[i]);
    CHECK(double(numerics::round_to(common::Precision::bf16, host.q[i])) == in.q[i]);
  }

  device::HostOutputs out;
  out.o = {0.1f, -0.2f, 0.0f, 0.0f};
  out.lse = {1.5f, -std::numeric_limits<float>::infinity()};
  numerics::AttentionOutputs const back = numerics::gpu::to_attention_outputs(out);
  REQUIRE(back.o.size() == 4);
  CHECK(back.o[0] == double(0.1f));
  CHECK(back.lse[1] == -std::numeric_limits<double>::infinity());
  CHECK_FALSE(back.has_backward());
}

TEST_CASE("outputs assigned into a kept buffer equal a fresh conversion, whatever it held before",
          "[numerics]") {
  device::HostOutputs backward;
  backward.o = {1.0f, -2.5f, 0.125f, 3.0f};
  backward.lse = {0.5f, -std::numeric_limits<float>::infinity()};
  backward.dq = {1e-3f, 2e-3f, 3e-3f, 4e-3f};
  backward.dk = {5.0f, 6.0f, 7.0f, 8.0f};
  backward.dv = {-1.0f, -2.0f, -3.0f, -4.0f};
  device::HostOutputs forward;
  forward.o = {0.75f, 0.25f};
  forward.lse = {1.0f};
  numerics::AttentionOutputs kept;
  for (auto const* out : {&backward, &forward, &backward}) {
    numerics::gpu::assign_attention_outputs(*out, kept);
    auto const fresh = numerics::gpu::to_attention_outputs(*out);
    CHECK(kept.o == fresh.o);
    CHECK(kept.lse == fresh.lse);
    CHECK(kept.dq == fresh.dq);
    CHECK(kept.dk == fresh.dk);
    CHECK(kept.dv == fresh.dv);
    CHECK(kept.has_backward() == !out->dq.empty());
  }
}
