#include <catch2/catch.hpp>

#include "tuner/measure/timing_stats.hpp"

using namespace fl::tuner;

TEST_CASE("summary statistics use interpolated percentiles", "[tuner][measure]") {
  auto s = summarize({5, 1, 4, 2, 3});
  REQUIRE(s);
  CHECK(s->median_ms == 3.0);
  CHECK(s->p20_ms == Approx(1.8));
  CHECK(s->p80_ms == Approx(4.2));
  CHECK(s->runs == 5);
  CHECK(s->relative_spread() == Approx(0.8));
  CHECK_FALSE(summarize({}));
}

TEST_CASE("a suspiciously fast candidate must be measured again", "[tuner][measure]") {
  TimingStats best{.median_ms = 1.0};
  CHECK(needs_remeasure(TimingStats{.median_ms = 0.8}, best));
  CHECK_FALSE(needs_remeasure(TimingStats{.median_ms = 0.9}, best));
  CHECK_FALSE(needs_remeasure(TimingStats{.median_ms = 0.1}, std::nullopt));
  auto const c = confirm(TimingStats{.median_ms = 0.8, .p20_ms = 0.7, .p80_ms = 0.9, .runs = 20},
                         TimingStats{.median_ms = 0.95, .p20_ms = 0.9, .p80_ms = 1.0, .runs = 20});
  CHECK(c.median_ms == 0.95);
  CHECK(c.p20_ms == 0.7);
  CHECK(c.runs == 40);
}
