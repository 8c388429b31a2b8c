// A problem's outcome as count_answer keeps it: every answer in order with its cost, the rejections counted,
// and the best an index into those rows, whose config, timing and measured_at are read back from its row.
#include <catch2/catch.hpp>

#include "tuner/tune/tune_outcome.hpp"

using namespace fl;
using namespace fl::tuner;

namespace {

db::Measurement ok_row(double median_ms, std::string measured_at) {
  db::Measurement m;
  m.verdict = "ok";
  m.median_ms = median_ms;
  m.tflops = 100.0 / median_ms;
  m.measured_at = std::move(measured_at);
  return m;
}

db::Measurement rejected_row(std::string verdict) {
  db::Measurement m;
  m.verdict = std::move(verdict);
  return m;
}

}  // namespace

TEST_CASE("count_answer: the best is the first fastest ok row, rejections are counted and never the best",
          "[tuner][tune]") {
  TuneOutcome outcome;
  CHECK_FALSE(outcome.best_row);
  CHECK_FALSE(outcome.best_stats());

  CHECK_FALSE(count_answer(outcome, "kBlockN=32", rejected_row("wrong"), {}));
  CHECK_FALSE(outcome.best_row);
  // An ok verdict without a median has no cost: rejected too.
  db::Measurement no_median;
  no_median.verdict = "ok";
  CHECK_FALSE(count_answer(outcome, "kBlockN=48", no_median, {}));
  CHECK(outcome.rejected == 2);
  CHECK_FALSE(outcome.best_row);

  CHECK(count_answer(outcome, "kBlockN=64", ok_row(2.0, "t1"), {}) == 2.0);
  REQUIRE(outcome.best_row == 2u);
  CHECK(outcome.best_config_text() == "kBlockN=64");

  CHECK(count_answer(outcome, "kBlockN=80", ok_row(1.5, "t2"), {.timing_ms = 7.0}) == 1.5);
  // A tie keeps the row that came first; a slower one and a rejection leave the best where it is.
  CHECK(count_answer(outcome, "kBlockN=96", ok_row(1.5, "t3"), {}) == 1.5);
  CHECK(count_answer(outcome, "kBlockN=112", ok_row(3.0, "t4"), {}) == 3.0);
  CHECK_FALSE(count_answer(outcome, "kBlockN=128", rejected_row("pruned"), {}));

  REQUIRE(outcome.best_row == 3u);
  CHECK(outcome.best_config_text() == "kBlockN=80");
  CHECK(outcome.best_measurement().measured_at == "t2");
  CHECK(outcome.best_measurement().tflops == Approx(100.0 / 1.5));
  CHECK(outcome.rejected == 3);
  // Every answer in order, its cost beside it.
  REQUIRE(outcome.rows.size() == 7);
  REQUIRE(outcome.costs.size() == 7);
  CHECK(outcome.rows[3].first == "kBlockN=80");
  CHECK(outcome.costs[3].timing_ms == 7.0);
  CHECK(outcome.rows[6].first == "kBlockN=128");
}

TEST_CASE("best_stats: the best row's timing, its median standing in for the percentiles it lacks",
          "[tuner][tune]") {
  TuneOutcome outcome;
  auto row = ok_row(2.0, "t1");
  row.p20_ms = 1.9;
  row.max_ms = 2.4;
  row.runs = 30;
  count_answer(outcome, "kBlockN=64", row, {});
  auto const stats = outcome.best_stats();
  REQUIRE(stats);
  CHECK(stats->median_ms == 2.0);
  CHECK(stats->p20_ms == 1.9);
  CHECK(stats->p80_ms == 2.0);  // not stored: the median
  CHECK(stats->min_ms == 2.0);
  CHECK(stats->max_ms == 2.4);
  CHECK(stats->runs == 30);
}
