// fa-tune resumed from its database (ProblemTuning::resume): every problem starts from every row stored for
// it and --budget counts them, so a selection whose budget was spent measures nothing and verifies nothing
// (no problem is prepared), though the grid's progress moved its warm starts; half a budget spent leaves
// the other half; a resumed problem's new default is still measured; and a --noise-runs repeat measures
// run 1's candidates again, the resumed ones included; and the stored rows count toward each problem's
// share (tune/budget_split.hpp).
#include <catch2/catch.hpp>

#include "db/schema.hpp"
#include "tests/tuner/tune/tune_command_fixture.hpp"

using namespace fl;
using namespace fl::tuner;
using fl::test::searched;
using Fixture = fl::test::CommandFixture;

namespace {

// A grid line's selection: 4 problems (n 1024 and 4096, full and causal) of one family, bayes warm-started.
std::vector<std::string> line(std::string const& budget, std::string const& seed = "1") {
  return {"--family", "fa2_sm80", "--seqlen",     "1024,4096", "--strategy", "bayes",
          "--budget", budget,     "--warm-start", "--seed",    seed};
}

int total(TuningReport const& report, int TuneRow::*count) {
  int sum = 0;
  for (auto const& row : report.rows) sum += row.*count;
  return sum;
}

std::int64_t count_rows(std::filesystem::path const& db_path, std::string const& table) {
  auto database = db::open_database(db_path);
  auto count = database.prepare("SELECT count(*) FROM " + table);
  count.step();
  return count.column_int64(0);
}

}  // namespace

TEST_CASE("a line whose budget was spent measures and prepares nothing, though its warm starts moved",
          "[tuner][tune]") {
  Fixture f;
  auto const first = f.run(line("16"));
  REQUIRE(first.rows.size() == 4);
  REQUIRE(total(first, &TuneRow::evaluated) == 16);
  // The grid goes on: n 2048's best configs are now the nearest tuned shapes of both n, so --warm-start
  // tries them first; the run that spent the budget never measured them.
  f.run({"--family", "fa2_sm80", "--seqlen", "2048", "--strategy", "bayes", "--budget", "8"});
  auto const stored = count_rows(f.db_path, "measurements");
  f.backend.log.clear();

  for (auto const& seed : {"1", "5"}) {
    auto const again = f.run(line("16", seed));
    INFO("seed " << seed);
    CHECK(f.backend.log.empty());  // neither a measurement nor a verification computed ahead
    CHECK(total(again, &TuneRow::evaluated) == 0);
    CHECK(total(again, &TuneRow::resumed) == 16);
    REQUIRE(again.rows.size() == first.rows.size());
    for (std::size_t i = 0; i < again.rows.size(); ++i) {
      INFO(again.rows[i].problem);
      CHECK(again.rows[i].best_config == first.rows[i].best_config);
      CHECK(again.rows[i].best_tflops == first.rows[i].best_tflops);
      CHECK(again.rows[i].end == SearchEnd::budget);
      CHECK(again.rows[i].default_verdict == "ok");
    }
  }
  CHECK(count_rows(f.db_path, "measurements") == stored);
}

TEST_CASE("a line rerun with twice its budget measures only the second half", "[tuner][tune]") {
  Fixture f;
  REQUIRE(total(f.run(line("8")), &TuneRow::evaluated) == 8);
  auto const rest = f.run(line("16", "5"));
  CHECK(total(rest, &TuneRow::evaluated) == 8);
  CHECK(total(rest, &TuneRow::resumed) == 8);
  for (auto const& row : rest.rows) CHECK(searched(row) == 4);
  CHECK(count_rows(f.db_path, "measurements") == 16);
}

TEST_CASE("a resumed problem whose default was never measured measures it, though the budget is spent",
          "[tuner][tune]") {
  Fixture f;
  auto const first = f.run(line("8"));
  REQUIRE(first.rows.size() == 4);
  {
    // As after a change of the family's default: problem 1's new default has no row.
    auto database = db::open_database(f.db_path);
    auto forget = database.prepare("DELETE FROM measurements WHERE config = ? AND problem_id = ?");
    auto pick = database.prepare(
        "SELECT problem_id FROM measurements WHERE config = ? ORDER BY "
        "measurement_id LIMIT 1");
    pick.bind_text(1, first.rows[0].default_config);
    REQUIRE(pick.step());
    forget.bind_text(1, first.rows[0].default_config).bind_int64(2, pick.column_int64(0));
    forget.step();
  }
  REQUIRE(count_rows(f.db_path, "measurements") == 7);
  f.backend.log.clear();
  // 7 stored rows of a budget of 7: nothing left, but problem 1 is reported against its default.
  auto const again = f.run(line("7"));
  std::vector<std::string> const expected{"evaluate " + again.rows[0].problem};
  CHECK(f.backend.log == expected);
  CHECK(again.rows[0].evaluated == 1);
  CHECK(again.rows[0].default_verdict == "ok");
  CHECK(total(again, &TuneRow::evaluated) == 1);
  CHECK(total(again, &TuneRow::resumed) == 7);
}

TEST_CASE("a noise repeat measures run 1's candidates again, the resumed ones included", "[tuner][tune]") {
  Fixture f;
  REQUIRE(total(f.run(line("8")), &TuneRow::evaluated) == 8);
  auto const series = f.run({"--family", "fa2_sm80", "--seqlen", "1024,4096", "--strategy", "bayes",
                             "--budget", "4", "--warm-start", "--seed", "5", "--noise-runs", "2"});
  REQUIRE(series.rows.size() == 4);
  CHECK(total(series, &TuneRow::evaluated) == 0);  // run 1: its budget is spent by the stored rows
  CHECK(count_rows(f.db_path, "remeasurements") == 8);
  for (auto const& row : series.rows) {
    INFO(row.problem);
    REQUIRE(row.noise.size() == 1);
    auto const& noise = row.noise[0];
    CHECK(noise.compared == 2);  // both of run 1's candidates, measured again
    CHECK_FALSE(noise.winner_changed);
    CHECK(noise.first_winner_ms_in_repeat);
  }
}

TEST_CASE("a resumed problem's stored rows count toward its share: the new evaluations go to the others",
          "[tuner][tune]") {
  Fixture f;
  auto const first = f.run({"--family", "fa2_sm80", "--seqlen", "1024", "--causal", "no", "--budget", "6"});
  REQUIRE(first.rows.size() == 1);
  REQUIRE(first.rows[0].evaluated == 6);
  // 12 in all over n 1024 (6 stored) and n 4096 (none): both reach 6, so n 1024 measures nothing more.
  // Split evenly, the 6 left would go half to n 1024.
  auto const both =
      f.run({"--family", "fa2_sm80", "--seqlen", "1024,4096", "--causal", "no", "--budget", "12"});
  REQUIRE(both.rows.size() == 2);
  CHECK(both.rows[0].resumed == 6);
  CHECK(both.rows[0].evaluated == 0);
  CHECK(both.rows[1].evaluated == 6);
  CHECK_THAT(both.split_note, Catch::Contains("counting the evaluations stored for it"));
}
