// The reference's rows computed in blocks over tiles of keys (numerics/reference_rows.hpp) against the
// textbook per-row float64 computation they replaced, and the sampled mode given every row's statistics.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "numerics/compensated_sum.hpp"
#include "numerics/compensated_vector.hpp"
#include "numerics/reference.hpp"
#include "tests/numerics/test_inputs.hpp"

using namespace fl::numerics;
using fl::numerics::test::make_shape;
using fl::numerics::test::random_inputs;

namespace {

struct Row {
  std::vector<double> o, o_plain, dq;
  double lse = -INFINITY, delta = 0.0;
};

// Query row r alone, as the reference computed it before the blocks (numerics/reference.cpp's
// compute_query_row until 2026-12-03): scores by dot() in key order, the max, exp(s - max) summed with
// Neumaier's compensation, P = e / l; then O, D = sum_j P_j dP_j and dQ accumulated key by key.
Row row_alone(AttentionInputs const& in, std::size_t r) {
  fl::common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  Row row;
  row.o.assign(d, 0.0);
  row.o_plain.assign(d, 0.0);
  row.dq.assign(d, 0.0);
  int const n = visible_keys(s, query_row_index(s, r).pos);
  if (n == 0) return row;
  double const* q = in.q.data() + r * d;
  double const* keys = in.k.data() + first_key_row_for_query(s, r) * d;
  double const* values = in.v.data() + first_key_row_for_query(s, r) * d;
  std::vector<double> p(static_cast<std::size_t>(n)), dp(p.size());
  for (std::size_t j = 0; j < p.size(); ++j) p[j] = s.scale() * dot(q, keys + j * d, d);
  double const row_max = *std::max_element(p.begin(), p.end());
  CompensatedSum l;
  for (double& x : p) {
    x = std::exp(x - row_max);
    l.add(x);
  }
  row.lse = row_max + std::log(l.value());
  for (double& x : p) x /= l.value();
  CompensatedVector o(d);
  for (std::size_t j = 0; j < p.size(); ++j) o.add_scaled(p[j], values + j * d);
  o.write_to(row.o);
  for (std::size_t j = 0; j < p.size(); ++j)  // OutputSum::plain: one rounding per addition, in key order
    for (std::size_t e = 0; e < d; ++e) row.o_plain[e] += p[j] * values[j * d + e];
  CompensatedSum delta;
  for (std::size_t j = 0; j < p.size(); ++j) {
    dp[j] = dot(in.d_o.data() + r * d, values + j * d, d);
    delta.add(p[j] * dp[j]);
  }
  row.delta = delta.value();
  CompensatedVector dq(d);
  for (std::size_t j = 0; j < p.size(); ++j) dq.add_scaled(p[j] * (dp[j] - row.delta), keys + j * d);
  dq.write_to(row.dq, s.scale());
  return row;
}

std::vector<double> row_of(std::vector<double> const& t, std::size_t r, std::size_t d) {
  return {t.begin() + std::ptrdiff_t(r * d), t.begin() + std::ptrdiff_t((r + 1) * d)};
}

}  // namespace

TEST_CASE("every row of the blocked reference is bit for bit the row computed alone",
          "[numerics][reference]") {
  struct Case {
    int b, hq, hkv, nq, nk, d;
    bool causal;
  };
  // GQA, odd lengths, n_q > n_k (fully masked rows), a head dimension with a tail (20: not a multiple of
  // the eight partial sums), d = 256, lengths that are no multiple of the tile (8 keys) or the block.
  for (Case c :
       {Case{1, 2, 2, 97, 131, 64, false}, Case{1, 4, 2, 131, 97, 64, true}, Case{2, 2, 1, 70, 40, 20, true},
        Case{1, 1, 1, 45, 45, 256, true}, Case{1, 3, 1, 33, 200, 40, false}}) {
    AttentionInputs const in = random_inputs(make_shape(c.b, c.hq, c.hkv, c.nq, c.nk, c.d, c.causal), 17);
    AttentionOutputs const full = reference_attention(in);
    ReferenceForward const forward = reference_forward_rows(in);
    ReferenceOptions plain_options;
    plain_options.o_sum = OutputSum::plain;
    ReferenceForward const plain = reference_forward_rows(in, plain_options);
    std::size_t const d = std::size_t(c.d);
    for (std::size_t r = 0; r < query_rows(in.shape); ++r) {
      INFO("shape " << c.b << "x" << c.hq << "/" << c.hkv << " " << c.nq << "x" << c.nk << " d" << c.d
                    << (c.causal ? " causal" : "") << ", row " << r);
      Row const alone = row_alone(in, r);
      CHECK(row_of(full.o, r, d) == alone.o);
      CHECK(row_of(full.dq, r, d) == alone.dq);
      CHECK(full.lse[r] == alone.lse);
      CHECK(row_of(forward.o, r, d) == alone.o);
      CHECK(forward.statistics.lse[r] == alone.lse);
      CHECK(forward.statistics.delta[r] == alone.delta);
      CHECK(row_of(plain.o, r, d) == alone.o_plain);
      CHECK(plain.statistics.lse[r] == alone.lse);
      CHECK(plain.statistics.delta[r] == alone.delta);
    }
  }
}

TEST_CASE("given every row's statistics, the sampled reference computes none and equals the full one",
          "[numerics][reference]") {
  AttentionInputs const in = random_inputs(make_shape(2, 4, 2, 70, 90, 16, true), 23);
  AttentionOutputs const full = reference_attention(in);
  ReferenceForward const forward = reference_forward_rows(in);
  RowSample sample;
  sample.query_rows = {0, 5, 69, 70, 200, 559};
  sample.key_rows = {0, 89, 90, 179, 300, 359};
  ReferenceOptions given;
  given.known_statistics = &forward.statistics;
  SampledOutputs const own = reference_sampled(in, sample);
  SampledOutputs const known = reference_sampled(in, sample, given);
  std::size_t const d = 16;
  for (std::size_t t = 0; t < sample.key_rows.size(); ++t) {
    std::size_t const c = known.sample.key_rows[t];
    CHECK(row_of(known.dk, t, d) == row_of(full.dk, c, d));
    CHECK(row_of(known.dv, t, d) == row_of(full.dv, c, d));
  }
  CHECK(known.dk == own.dk);
  CHECK(known.dq == own.dq);
  CHECK(known.all_lse == forward.statistics.lse);

  // The statistics given are what dK uses (no pass of its own): another LSE for an unsampled query row that
  // sees key row 0 moves that key row's dK.
  RowStatistics moved = forward.statistics;
  moved.lse[1] += 0.5;
  given.known_statistics = &moved;
  CHECK(row_of(reference_sampled(in, sample, given).dk, 0, d) != row_of(full.dk, 0, d));

  // ...but never unchecked: a sampled row's statistics must be the reference's to the bit, and every row
  // must be there.
  RowStatistics wrong = forward.statistics;
  wrong.delta[200] = std::nextafter(wrong.delta[200], 1.0);
  given.known_statistics = &wrong;
  CHECK_THROWS_AS(reference_sampled(in, sample, given), std::invalid_argument);
  RowStatistics short_of_rows = forward.statistics;
  short_of_rows.lse.pop_back();
  given.known_statistics = &short_of_rows;
  CHECK_THROWS_AS(reference_sampled(in, sample, given), std::invalid_argument);
}

TEST_CASE("O summed plainly stays within N_k * 2^-53 * max|V| of the compensated O",
          "[numerics][reference]") {
  // Long rows (2000 keys), so that the plain sum's rounding errors have room to grow.
  AttentionInputs const in = random_inputs(make_shape(1, 2, 2, 40, 2000, 64, false), 29);
  ReferenceOptions plain_options;
  plain_options.o_sum = OutputSum::plain;
  ReferenceForward const compensated = reference_forward_rows(in);
  ReferenceForward const plain = reference_forward_rows(in, plain_options);
  double max_v = 0.0;
  for (double v : in.v) max_v = std::max(max_v, std::fabs(v));
  double const bound = 2000 * std::ldexp(1.0, -53) * max_v;
  double worst = 0.0;
  std::size_t differ = 0;
  for (std::size_t i = 0; i < plain.o.size(); ++i) {
    worst = std::max(worst, std::fabs(plain.o[i] - compensated.o[i]));
    differ += plain.o[i] != compensated.o[i];
  }
  CHECK(worst <= bound);
  CHECK(differ > 0);  // the two sums are not the same computation
  // Rounded to float, as a backward kernel's forward input is, the two agree.
  for (std::size_t i = 0; i < plain.o.size(); ++i) CHECK(float(plain.o[i]) == float(compensated.o[i]));
}
