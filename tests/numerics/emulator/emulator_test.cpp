#include "numerics/emulator/emulator.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "numerics/precision.hpp"
#include "tests/numerics/emulator/naive_attention.hpp"

namespace {

using fl::common::AttentionShape;
using fl::common::Precision;
namespace emu = fl::numerics::emulator;

struct Problem {
  AttentionShape shape;
  std::vector<float> q, k, v, d_o;
  fl::numerics::AttentionInputs view() const {
    auto widen = [](std::vector<float> const& x) { return std::vector<double>(x.begin(), x.end()); };
    return {shape, widen(q), widen(k), widen(v), widen(d_o)};
  }
};

Problem make_problem(AttentionShape shape, unsigned seed) {
  Problem p{shape, fl::test::normal_values(shape.q_elements(), seed),
            fl::test::normal_values(shape.kv_elements(), seed + 1),
            fl::test::normal_values(shape.kv_elements(), seed + 2),
            fl::test::normal_values(shape.q_elements(), seed + 3)};
  return p;
}

// Largest |a - b| over finite pairs; infinite if one is NaN and the other not.
double max_difference(std::vector<float> const& a, std::vector<double> const& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isinf(b[i]) && a[i] == float(b[i])) continue;
    double const diff = std::fabs(double(a[i]) - b[i]);
    if (!(diff <= worst)) worst = diff;  // NaN propagates as worst
  }
  return worst;
}

AttentionShape shape_of(int nq, int nk, bool causal, int hq = 2, int hkv = 1, int d = 16) {
  AttentionShape s;
  s.batch = 1;
  s.heads_q = hq;
  s.heads_kv = hkv;
  s.seqlen_q = nq;
  s.seqlen_k = nk;
  s.head_dim = d;
  s.causal = causal;
  return s;
}

// fp32 emulation differs from the float64 reference only by fp32 rounding of sums over <= 100 terms.
constexpr double kFp32Tolerance = 2e-5;

}  // namespace

TEST_CASE("fp32 emulator forward matches a plain float64 attention for both loop orders", "[emulator]") {
  for (auto order : {emu::LoopOrder::fa1, emu::LoopOrder::fa2})
    for (bool causal : {false, true})
      for (auto [nq, nk] : {std::pair{37, 37}, std::pair{50, 29}, std::pair{29, 70}}) {
        auto const p = make_problem(shape_of(nq, nk, causal), 7);
        auto const ref = fl::test::naive_forward(p.shape, p.q, p.k, p.v);
        emu::EmulatorConfig config{Precision::fp32, {16, 16}, order, {}, 1};
        auto const out = emu::emulate_forward(p.view(), config);
        INFO("order " << int(order) << " causal " << causal << " nq " << nq << " nk " << nk);
        CHECK(max_difference(out.o, ref.o) < kFp32Tolerance);
        CHECK(max_difference(out.lse, ref.lse) < kFp32Tolerance);
      }
}

TEST_CASE("fully masked rows give O = 0 and LSE = -inf without NaN", "[emulator]") {
  // N_q > N_k causal: the first N_q - N_k rows see no key; block_m 16 with 40 - 29 = 11 masked rows puts
  // masked and visible rows in one tile, which is where the guard matters.
  auto const p = make_problem(shape_of(40, 29, true), 3);
  for (auto order : {emu::LoopOrder::fa1, emu::LoopOrder::fa2}) {
    auto const out = emu::emulate_forward(p.view(), {Precision::bf16, {16, 16}, order, {}, 1});
    for (int i = 0; i < 11; ++i) {
      CHECK(out.lse[std::size_t(i)] == -std::numeric_limits<float>::infinity());
      for (int e = 0; e < 16; ++e) CHECK(out.o[std::size_t(i * 16 + e)] == 0.0f);
    }
    for (float x : out.o) CHECK_FALSE(std::isnan(x));
  }
}

TEST_CASE("emulator is deterministic and independent of the thread count", "[emulator]") {
  auto const p = make_problem(shape_of(70, 70, true, 4, 2), 11);
  emu::EmulatorConfig one{Precision::fp16, {32, 16}, emu::LoopOrder::fa2, {}, 1};
  emu::EmulatorConfig two = one;
  two.threads = 2;
  auto const a = emu::emulate_forward(p.view(), one);
  auto const b = emu::emulate_forward(p.view(), two);
  CHECK(a.o == b.o);
  CHECK(a.lse == b.lse);
  auto const ga = emu::emulate_backward(p.view(), one);
  auto const gb = emu::emulate_backward(p.view(), two);
  CHECK(ga.dq == gb.dq);
  CHECK(ga.dk == gb.dk);
  CHECK(ga.dv == gb.dv);
}

TEST_CASE("16-bit emulation stays within a few input roundoffs of float64", "[emulator]") {
  auto const p = make_problem(shape_of(64, 96, false), 5);
  auto const ref = fl::test::naive_forward(p.shape, p.q, p.k, p.v);
  for (auto precision : {Precision::fp16, Precision::bf16})
    for (auto order : {emu::LoopOrder::fa1, emu::LoopOrder::fa2}) {
      auto const out = emu::emulate_forward(p.view(), {precision, {32, 32}, order, {}, 0});
      // |O| <= max |V| ~ 4; inputs, P and O each rounded once: a handful of u times that.
      double const bound = 8.0 * fl::numerics::unit_roundoff(precision) * 4.0;
      CHECK(max_difference(out.o, ref.o) < bound);
    }
}

TEST_CASE("fp32 emulator backward matches a plain float64 backward", "[emulator]") {
  for (bool causal : {false, true}) {
    auto const p = make_problem(shape_of(45, 37, causal, 4, 2), 21);
    auto const ref = fl::test::naive_backward(p.shape, p.q, p.k, p.v, p.d_o);
    auto const g = emu::emulate_backward(p.view(), {Precision::fp32, {16, 16}, emu::LoopOrder::fa2, {}, 0});
    INFO("causal " << causal);
    CHECK(max_difference(g.dq, ref.dq) < 1e-4);
    CHECK(max_difference(g.dk, ref.dk) < 1e-4);
    CHECK(max_difference(g.dv, ref.dv) < 1e-4);
  }
}

TEST_CASE("fp8 forward stays within e4m3 accuracy and the backward follows the recipe", "[emulator]") {
  auto const p = make_problem(shape_of(64, 64, false), 9);
  auto const ref = fl::test::naive_forward(p.shape, p.q, p.k, p.v);
  auto const out =
      emu::emulate_forward(p.view(), {Precision::fp8_e4m3, {64, 64}, emu::LoopOrder::fa2, {}, 0});
  CHECK(max_difference(out.o, ref.o) < 0.25);
  CHECK(max_difference(out.o, ref.o) > 0.0);
  auto const g = emu::emulate_backward(p.view(), {Precision::fp8_e4m3, {64, 64}, emu::LoopOrder::fa2, {}, 0});
  auto const ref_g = fl::test::naive_backward(p.shape, p.q, p.k, p.v, p.d_o);
  // Gradients of O(1) size through e4m3 operands (u = 2^-4) and bf16 dS: well inside 0.5, far from 0.
  CHECK(max_difference(g.dq, ref_g.dq) < 0.5);
  CHECK(max_difference(g.dq, ref_g.dq) > 0.0);
}
