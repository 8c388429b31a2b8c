#include "tuner/tune/noise_report.hpp"

#include <catch2/catch.hpp>

using namespace fl::tuner;

namespace {
fl::db::Measurement ok(double median, double spread = 0.01) {
  fl::db::Measurement m;
  m.verdict = "ok";
  m.median_ms = median;
  m.p20_ms = median - spread;
  m.p80_ms = median + spread;
  return m;
}
fl::db::Measurement rejected() {
  fl::db::Measurement m;
  m.verdict = "wrong";
  return m;
}
}  // namespace

TEST_CASE("noise report: same winner, no rank change", "[tuner][tune]") {
  RunRows const a{{"A", ok(1.0)}, {"B", ok(1.2)}, {"C", ok(1.5)}, {"X", rejected()}};
  RunRows const b{{"A", ok(1.01)}, {"B", ok(1.19)}, {"C", ok(1.52)}, {"X", rejected()}};
  auto const c = compare_runs(a, b, 2);
  CHECK_FALSE(c.winner_changed);
  CHECK(c.winner_first == "A");
  CHECK(c.compared == 3);
  CHECK(c.rank_changed == 0);
  CHECK(c.discordant_pairs == 0);
  CHECK(c.pairs == 3);
  CHECK(c.max_abs_change == Approx(0.02 / 1.5).epsilon(1e-9));
  CHECK(c.max_change_config == "C");
  CHECK_THAT(render_noise("p", c), Catch::Contains("same winner") && Catch::Contains("0 changed rank"));
}

TEST_CASE("noise report: a changed winner inside and outside the p20-p80 noise", "[tuner][tune]") {
  RunRows const a{{"A", ok(1.00)}, {"B", ok(1.01)}, {"C", ok(2.0)}};
  RunRows const close{{"A", ok(1.02)}, {"B", ok(1.00)}, {"C", ok(2.0)}};
  auto const c = compare_runs(a, close, 2);
  CHECK(c.winner_changed);
  CHECK(c.winner_repeat == "B");
  CHECK(c.first_winner_ms_in_repeat == Approx(1.02));
  CHECK(c.winners_overlap);  // [1.01, 1.03] and [0.99, 1.01] touch
  CHECK(c.rank_changed == 2);
  CHECK(c.discordant_pairs == 1);

  RunRows const apart{{"A", ok(1.30, 0.01)}, {"B", ok(1.00, 0.01)}, {"C", ok(2.0)}};
  auto const d = compare_runs(a, apart, 3);
  CHECK(d.winner_changed);
  CHECK_FALSE(d.winners_overlap);
  CHECK_THAT(noise_json(d), Catch::Contains("\"winner_changed\": true") && Catch::Contains("\"repeat\": 3"));
}
