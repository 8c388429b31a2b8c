// The encodings made once per input set (EncodedInputs) are the ones each upload would make, and what
// they save per candidate ([cost]).
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "tuner/run/host_tensors.hpp"

using namespace fl::device;
using namespace fl::tuner;
using fl::common::Precision;

TEST_CASE("inputs encoded once are the encodings each upload would make", "[tuner][run]") {
  Problem const problem = headline_problem(256, 64, false, Precision::fp16, Direction::backward);
  auto const inputs = make_normal_inputs(problem, 7);
  auto const encoded = encode_inputs(inputs, problem.dtype);
  CHECK(encoded.dtype == Precision::fp16);
  CHECK(encoded.q == encode_16bit(inputs.q, problem.dtype));
  CHECK(encoded.k == encode_16bit(inputs.k, problem.dtype));
  CHECK(encoded.v == encode_16bit(inputs.v, problem.dtype));
  CHECK(encoded.d_o == encode_16bit(inputs.d_o, problem.dtype));
  CHECK(decode_16bit(encoded.v, problem.dtype) == inputs.v);  // the inputs are exact in the dtype
}

TEST_CASE("normal inputs are the same for a seed, drawn chunk by chunk from independent streams",
          "[tuner][run]") {
  // 2 x 8 x 300 x 64 = 307200 elements a tensor: five chunks of 2^16, so the threads draw several.
  fl::common::AttentionShape shape;
  shape.batch = 2;
  shape.heads_q = shape.heads_kv = 8;
  shape.seqlen_q = shape.seqlen_k = 300;
  shape.head_dim = 64;
  Problem const problem(shape, Precision::bf16, Direction::backward);
  auto const a = make_normal_inputs(problem, 11);
  auto const b = make_normal_inputs(problem, 11);
  CHECK(a.q == b.q);
  CHECK(a.d_o == b.d_o);
  CHECK(make_normal_inputs(problem, 12).k != a.k);
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

// Not part of CI ([.]): the host work of one candidate's uploads and download at the H200 tuning shape
// (b4 h16 n4096 d128 bf16): the 2026-11-29 protocol converts Q, K, V for each of its three input sets
// (verification + 2 rotated timing sets); the fast pace converts once per problem. Both decode O once. Run:
// build/bin/test_tuner "[cost]"; the numbers are in tuner/README.md.
TEST_CASE("host conversions of one candidate before and after encoding once", "[.][cost]") {
  Problem const problem = headline_problem(4096, 128, false, Precision::bf16, Direction::forward);
  auto const inputs = make_normal_inputs(problem, 20261129);
  auto const seconds_of = [](auto&& work) {
    auto const start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  constexpr int kInputSets = 3;
  std::size_t sink = 0;
  double const encode_s = seconds_of([&] {
    for (int set = 0; set < kInputSets; ++set) sink += encode_inputs(inputs, problem.dtype).q.size();
  });
  auto const o_bits = encode_16bit(inputs.q, problem.dtype);  // O has Q's shape
  double const decode_s = seconds_of([&] { sink += decode_16bit(o_bits, problem.dtype).size(); });
  CHECK(sink > 0);
  std::printf(
      "host conversions of one candidate (%s):\n  before: encode Q, K, V x %d sets %.2f s + decode O %.3f s\n"
      "  after:  encode 0 s (once per problem: %.2f s) + decode O %.3f s\n",
      describe(problem).c_str(), kInputSets, encode_s, decode_s, encode_s / kInputSets, decode_s);
}
