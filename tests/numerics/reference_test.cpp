#include <catch2/catch.hpp>

#include <atomic>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>

#include "numerics/naive_attention.hpp"
#include "numerics/reference.hpp"
#include "tests/numerics/test_inputs.hpp"

using namespace fl::numerics;
using fl::numerics::test::make_shape;
using fl::numerics::test::random_inputs;
using Float50 = boost::multiprecision::cpp_bin_float_50;

namespace {

// max |x - exact| / max |exact| over a tensor (infinities must match exactly).
template <class T>
double normwise_error(std::vector<double> const& x, std::vector<T> const& exact) {
  double worst = 0.0, scale = 0.0;
  REQUIRE(x.size() == exact.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    double const e = static_cast<double>(exact[i]);
    if (std::isinf(e)) {
      CHECK(x[i] == e);
      continue;
    }
    worst = std::max(worst, std::fabs(static_cast<double>(T(x[i]) - exact[i])));
    scale = std::max(scale, std::fabs(e));
  }
  return scale > 0.0 ? worst / scale : worst;
}

}  // namespace

TEST_CASE("float64 reference agrees with a 50-digit evaluation to 1e-12", "[numerics][reference]") {
  constexpr double kPromisedRelativeError = 1e-12;
  struct Case {
    fl::common::AttentionShape shape;
    double input_scale;  // larger inputs make the softmax peakier and the sums more cancelling
  };
  Case const cases[] = {
      {make_shape(1, 2, 1, 37, 53, 16, false), 1.0},   // GQA, odd n, n_q != n_k
      {make_shape(1, 2, 2, 53, 37, 16, true), 1.0},    // causal with n_q > n_k: masked rows
      {make_shape(2, 1, 1, 64, 64, 32, true), 3.0},    // peaky softmax
      {make_shape(1, 1, 1, 200, 200, 8, false), 0.3},  // long, flat rows: many similar terms
  };
  for (auto const& c : cases) {
    AttentionInputs in = random_inputs(c.shape, 42);
    for (auto* t : {&in.q, &in.k})
      for (double& x : *t) x *= c.input_scale;
    AttentionOutputs const ref = reference_attention(in);
    NaiveOutputs<Float50> const exact = naive_attention<Float50>(in);
    CHECK(normwise_error(ref.o, exact.o) <= kPromisedRelativeError);
    CHECK(normwise_error(ref.lse, exact.lse) <= kPromisedRelativeError);
    CHECK(normwise_error(ref.dq, exact.dq) <= kPromisedRelativeError);
    CHECK(normwise_error(ref.dk, exact.dk) <= kPromisedRelativeError);
    CHECK(normwise_error(ref.dv, exact.dv) <= kPromisedRelativeError);
  }
}

TEST_CASE("reference matches the textbook formulas: causal, GQA, odd n", "[numerics][reference]") {
  fl::common::AttentionShape const shapes[] = {
      make_shape(2, 4, 2, 31, 31, 8, true),
      make_shape(1, 3, 1, 17, 29, 12, true),
      make_shape(1, 2, 2, 29, 17, 8, true),
      make_shape(1, 4, 4, 33, 65, 8, false),
  };
  for (auto const& shape : shapes) {
    AttentionInputs const in = random_inputs(shape, 7);
    AttentionOutputs const ref = reference_attention(in);
    NaiveOutputs<double> const naive = naive_attention<double>(in);
    for (std::size_t i = 0; i < ref.o.size(); ++i) CHECK(ref.o[i] == Approx(naive.o[i]).margin(1e-13));
    for (std::size_t i = 0; i < ref.lse.size(); ++i)
      if (std::isinf(naive.lse[i]))
        CHECK(ref.lse[i] == naive.lse[i]);
      else
        CHECK(ref.lse[i] == Approx(naive.lse[i]).margin(1e-13));
    for (std::size_t i = 0; i < ref.dq.size(); ++i) CHECK(ref.dq[i] == Approx(naive.dq[i]).margin(1e-12));
    for (std::size_t i = 0; i < ref.dk.size(); ++i) CHECK(ref.dk[i] == Approx(naive.dk[i]).margin(1e-12));
    for (std::size_t i = 0; i < ref.dv.size(); ++i) CHECK(ref.dv[i] == Approx(naive.dv[i]).margin(1e-12));
  }
}

TEST_CASE("causal masks are bottom-right aligned and empty rows give O = 0, LSE = -inf",
          "[numerics][reference]") {
  // n_q = 6 < n_k = 10: query row i sees keys 0 .. i + 4, so its output equals non-causal attention over
  // the first i + 5 keys.
  fl::common::AttentionShape causal = make_shape(1, 1, 1, 6, 10, 8, true);
  AttentionInputs const in = random_inputs(causal, 3);
  AttentionOutputs const ref = reference_attention(in);
  for (int i = 0; i < 6; ++i) {
    AttentionInputs prefix;
    prefix.shape = make_shape(1, 1, 1, 1, i + 5, 8, false);
    prefix.q.assign(in.q.begin() + i * 8, in.q.begin() + (i + 1) * 8);
    prefix.k.assign(in.k.begin(), in.k.begin() + (i + 5) * 8);
    prefix.v.assign(in.v.begin(), in.v.begin() + (i + 5) * 8);
    AttentionOutputs const p = reference_attention(prefix);
    for (int e = 0; e < 8; ++e)
      CHECK(ref.o[std::size_t(i * 8 + e)] == Approx(p.o[std::size_t(e)]).margin(1e-14));
    CHECK(ref.lse[std::size_t(i)] == Approx(p.lse[0]).margin(1e-14));
  }
  // n_q = 10 > n_k = 6: rows 0..3 see no key.
  AttentionInputs const tall = random_inputs(make_shape(1, 1, 1, 10, 6, 8, true), 4);
  AttentionOutputs const t = reference_attention(tall);
  for (int i = 0; i < 10; ++i) {
    bool const empty = i < 4;
    CHECK(std::isinf(t.lse[std::size_t(i)]) == empty);
    if (empty) {
      CHECK(t.lse[std::size_t(i)] < 0);
      for (int e = 0; e < 8; ++e) {
        CHECK(t.o[std::size_t(i * 8 + e)] == 0.0);
        CHECK(t.dq[std::size_t(i * 8 + e)] == 0.0);
      }
    }
  }
}

TEST_CASE("sampled reference equals the full reference on the sampled rows", "[numerics][reference]") {
  fl::common::AttentionShape const shape = make_shape(2, 4, 2, 70, 90, 16, true);
  AttentionInputs const in = random_inputs(shape, 11);
  AttentionOutputs const full = reference_attention(in);
  RowSample sample;
  sample.query_rows = {0, 5, 69, 70, 200, 559, 3, 5};  // unsorted, with a duplicate
  sample.key_rows = {0, 89, 90, 179, 300, 359};
  SampledOutputs const part = reference_sampled(in, sample, {1});
  REQUIRE(part.sample.query_rows.size() == 7);
  std::size_t const d = 16;
  for (std::size_t t = 0; t < part.sample.query_rows.size(); ++t) {
    std::size_t const r = part.sample.query_rows[t];
    CHECK(part.lse[t] == full.lse[r]);
    for (std::size_t e = 0; e < d; ++e) {
      CHECK(part.o[t * d + e] == full.o[r * d + e]);
      CHECK(part.dq[t * d + e] == full.dq[r * d + e]);
    }
  }
  // dK and dV of sampled key rows use the statistics (LSE, D) of unsampled query rows, computed by the same
  // operations as the full reference's (numerics/reference_rows.hpp): bit for bit too.
  for (std::size_t t = 0; t < part.sample.key_rows.size(); ++t) {
    std::size_t const c = part.sample.key_rows[t];
    for (std::size_t e = 0; e < d; ++e) {
      CHECK(part.dk[t * d + e] == full.dk[c * d + e]);
      CHECK(part.dv[t * d + e] == full.dv[c * d + e]);
    }
  }
  for (std::size_t r = 0; r < full.lse.size(); ++r)
    if (!std::isnan(part.all_lse[r])) CHECK(part.all_lse[r] == full.lse[r]);
}

TEST_CASE("a forward-only sample is the sample's O and LSE, bit for bit, and nothing of the backward",
          "[numerics][reference]") {
  AttentionInputs const in = random_inputs(make_shape(1, 2, 2, 48, 64, 16, true), 7);
  REQUIRE(in.has_backward());
  RowSample sample;
  sample.query_rows = {1, 30, 47, 60, 95};
  sample.key_rows = {2, 63, 100};
  ReferenceOptions options{1};
  SampledOutputs const both = reference_sampled(in, sample, options);
  options.forward_only = true;
  SampledOutputs const forward = reference_sampled(in, sample, options);
  CHECK(forward.o == both.o);
  CHECK(forward.lse == both.lse);
  CHECK(forward.sample.key_rows.empty());
  CHECK(forward.delta.empty());
  CHECK(forward.dq.empty());
  CHECK(forward.dk.empty());
  CHECK(forward.dv.empty());
  REQUIRE_FALSE(both.dq.empty());
}

TEST_CASE("reference is deterministic across thread counts", "[numerics][reference]") {
  AttentionInputs const in = random_inputs(make_shape(1, 2, 1, 100, 100, 16, true), 5);
  AttentionOutputs const one = reference_attention(in, {1});
  AttentionOutputs const two = reference_attention(in, {2});
  CHECK(one.o == two.o);
  CHECK(one.dk == two.dk);
}

TEST_CASE("a cancelled forward pass stops and says so, and an uncancelled one is the same pass",
          "[numerics]") {
  auto const in =
      fl::numerics::test::random_inputs(fl::numerics::test::make_shape(1, 2, 2, 40, 56, 16, true), 3);
  std::atomic<bool> cancel{true};
  fl::numerics::ReferenceOptions options;
  options.cancel = &cancel;
  CHECK_THROWS_AS(fl::numerics::reference_forward_rows(in, options), fl::numerics::ReferenceCancelled);
  cancel = false;
  auto const with_flag = fl::numerics::reference_forward_rows(in, options);
  auto const without = fl::numerics::reference_forward_rows(in);
  CHECK(with_flag.o == without.o);
  CHECK(with_flag.statistics.lse == without.statistics.lse);
  CHECK(with_flag.statistics.delta == without.statistics.delta);
}
