// The encodings made once per input set (device::EncodedInputs) are the ones each upload would make, and what
// they save per candidate ([cost]).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>

#include "device/run/host_tensors.hpp"
#include "numerics/gpu/kernel_inputs.hpp"

using namespace fl;
using namespace fl::device;
using fl::common::Precision;

TEST_CASE("inputs encoded once are the encodings each upload would make", "[device][run]") {
  Problem const problem = headline_problem(256, 64, false, Precision::fp16, Direction::backward);
  auto const inputs = numerics::gpu::make_normal_inputs(problem, 7);
  auto const encoded = device::encode_inputs(inputs, problem.dtype);
  CHECK(encoded.dtype == Precision::fp16);
  CHECK(encoded.q == device::encode_16bit(inputs.q, problem.dtype));
  CHECK(encoded.k == device::encode_16bit(inputs.k, problem.dtype));
  CHECK(encoded.v == device::encode_16bit(inputs.v, problem.dtype));
  CHECK(encoded.d_o == device::encode_16bit(inputs.d_o, problem.dtype));
  CHECK(device::decode_16bit(encoded.v, problem.dtype) == inputs.v);  // the inputs are exact in the dtype
}

// Not part of CI ([.]): the host work of one candidate's uploads and download at the H200 tuning shape
// (b4 h16 n4096 d128 bf16): the 2026-11-29 protocol converts Q, K, V for each of its three input sets
// (verification + 2 rotated timing sets); the fast pace converts once per problem. Both decode O once. Run:
// build/bin/test_tuner "[cost]"; the numbers are in tuner/README.md.
TEST_CASE("host conversions of one candidate before and after encoding once", "[.][cost]") {
  Problem const problem = headline_problem(4096, 128, false, Precision::bf16, Direction::forward);
  auto const inputs = numerics::gpu::make_normal_inputs(problem, 20261129);
  auto const seconds_of = [](auto&& work) {
    auto const start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  constexpr int kInputSets = 3;
  std::size_t sink = 0;
  double const encode_s = seconds_of([&] {
    for (int set = 0; set < kInputSets; ++set) sink += device::encode_inputs(inputs, problem.dtype).q.size();
  });
  auto const o_bits = device::encode_16bit(inputs.q, problem.dtype);  // O has Q's shape
  double const decode_s = seconds_of([&] { sink += device::decode_16bit(o_bits, problem.dtype).size(); });
  CHECK(sink > 0);
  std::printf(
      "host conversions of one candidate (%s):\n  before: encode Q, K, V x %d sets %.2f s + decode O %.3f s\n"
      "  after:  encode 0 s (once per problem: %.2f s) + decode O %.3f s\n",
      describe(problem).c_str(), kInputSets, encode_s, decode_s, encode_s / kInputSets, decode_s);
}
