// Interface mistakes named from outputs a correct implementation wrote under the mistake (here: the float64
// reference of the mistaken problem, rounded to bf16): each is named first with its fix, a correct output
// with the matching convention passes, and --causal-align top-left makes a top-left output pass.
#include "numerics/diagnosis/interface_mistakes.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

#include "numerics/check.hpp"
#include "numerics/diagnosis/fa_check_diagnoser.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"
#include "tests/numerics/test_inputs.hpp"

namespace {

using namespace fl::numerics;
namespace dx = fl::numerics::diagnosis;

AttentionInputs bf16_inputs(fl::common::AttentionShape const& s, std::uint64_t seed) {
  AttentionInputs in = test::random_inputs(s, seed, false);
  for (auto* t : {&in.q, &in.k, &in.v})
    for (double& x : *t) x = round_to(fl::common::Precision::bf16, static_cast<float>(x));
  return in;
}

// What a correct bf16 kernel returns for `computed`: the reference, O rounded to bf16, LSE in fp32.
AttentionOutputs correct_output(AttentionInputs const& computed) {
  AttentionOutputs out = reference_attention(computed);
  for (double& x : out.o) x = round_to(fl::common::Precision::bf16, static_cast<float>(x));
  for (double& x : out.lse) x = double(float(x));
  return out;
}

CheckResult check(AttentionInputs const& in, AttentionOutputs const& observed) {
  CheckOptions options;
  options.claimed = fl::common::Precision::bf16;
  options.threads = 1;
  return run_check(in, observed, options, dx::make_fa_check_diagnoser({}, 1));
}

std::string first_id(CheckResult const& r) {
  return r.diagnosis.empty() ? "(none)" : r.diagnosis.front().id;
}

}  // namespace

TEST_CASE("a top-left causal output is named causal-top-left, and passes with --causal-align top-left",
          "[diagnosis][interface]") {
  AttentionInputs in = bf16_inputs(test::make_shape(1, 2, 2, 48, 80, 32, true), 5);
  AttentionInputs top_left = in;
  top_left.shape.causal_top_left = true;
  AttentionOutputs const observed = correct_output(top_left);
  CheckResult const r = check(in, observed);
  REQUIRE_FALSE(r.pass);
  CHECK(first_id(r) == "causal-top-left");
  CHECK(r.diagnosis.front().kind == "interface");
  CHECK(r.diagnosis.front().fix.find("--causal-align top-left") != std::string::npos);
  CHECK(r.diagnosis.front().strength > 4.0);
  CheckResult const again = check(top_left, observed);
  CHECK(again.pass);
  CHECK(again.causal_convention.find("top-left") != std::string::npos);
}

TEST_CASE("K and V swapped, a scale of 1/D and GQA heads interleaved are named", "[diagnosis][interface]") {
  AttentionInputs const in = bf16_inputs(test::make_shape(1, 4, 2, 40, 56, 32, false), 9);
  SECTION("kv-swapped") {
    AttentionInputs swapped = in;
    std::swap(swapped.k, swapped.v);
    CHECK(first_id(check(in, correct_output(swapped))) == "kv-swapped");
  }
  SECTION("scale-1-over-d") {
    AttentionInputs scaled = in;
    scaled.shape.softmax_scale = 1.0 / 32;
    CHECK(first_id(check(in, correct_output(scaled))) == "scale-1-over-d");
  }
  SECTION("gqa-interleaved") {
    // Query head h reads key/value head h % 2: heads 1 and 2 swap their key/value heads.
    AttentionInputs expanded = in;
    expanded.shape.heads_kv = 4;
    std::size_t const per_head = std::size_t(56) * 32;
    expanded.k.assign(4 * per_head, 0.0);
    expanded.v.assign(4 * per_head, 0.0);
    for (std::size_t h = 0; h < 4; ++h)
      for (std::size_t e = 0; e < per_head; ++e) {
        expanded.k[h * per_head + e] = in.k[(h % 2) * per_head + e];
        expanded.v[h * per_head + e] = in.v[(h % 2) * per_head + e];
      }
    CHECK(first_id(check(in, correct_output(expanded))) == "gqa-interleaved");
  }
}

TEST_CASE("LSE in log2 and an output laid out (B, N, H, D) are named, a correct output is not",
          "[diagnosis][interface]") {
  AttentionInputs const in = bf16_inputs(test::make_shape(1, 3, 3, 40, 40, 32, false), 11);
  AttentionOutputs const right = correct_output(in);
  CHECK(check(in, right).pass);
  AttentionOutputs log2 = right;
  for (double& x : log2.lse) x /= std::numbers::ln2;
  CHECK(first_id(check(in, log2)) == "lse-log2");
  // The (B, H, N, D) tensor written out in (B, N, H, D) order.
  AttentionOutputs bnhd = right;
  for (int h = 0; h < 3; ++h)
    for (int n = 0; n < 40; ++n)
      for (int e = 0; e < 32; ++e)
        bnhd.o[std::size_t((n * 3 + h) * 32 + e)] = right.o[std::size_t((h * 40 + n) * 32 + e)];
  REQUIRE(dx::from_bnhd_memory(bnhd.o, 1, 3, 40, 32) == right.o);
  CHECK(first_id(check(in, bnhd)) == "layout-bnhd");
}
