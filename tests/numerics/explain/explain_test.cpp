// fa-explain's logic on the FlashAttention lesson's own example (scores 1,3,2,5,0.5,4, values 10..60,
// blocks of 2): the golden figures, checked by hand: block 0 m = 3, scale = exp(-inf) = 0,
// l = e^(1-3) + e^0 = 1.1353, output (10 e^-2 + 20) / 1.1353 = 18.808; the end 42.347429.
#include "numerics/explain/explain.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace fl::numerics;
namespace ex = fl::numerics::explain;

std::vector<double> const kLessonScores = {1, 3, 2, 5, 0.5, 4};
std::vector<double> const kLessonValues = {10, 20, 30, 40, 50, 60};

bool contains(std::string const& text, std::string const& part) {
  return text.find(part) != std::string::npos;
}

// render_csv's lines, each split at its commas.
std::vector<std::vector<std::string>> csv_rows(std::string const& csv) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(csv);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) fields.push_back(cell);
    rows.push_back(fields);
  }
  return rows;
}

}  // namespace

TEST_CASE("fa-explain's lesson example: the golden block states and the answer", "[explain]") {
  ex::RowProblem const problem =
      ex::row_from_scores(kLessonScores, kLessonValues, 1, 1.0, fl::common::Precision::fp32);
  ex::Explanation const x = ex::explain_row(problem, 2, {mutants::MutantId::unrescaled_o});
  std::string const text = ex::render_text(problem, x);
  INFO(text);
  CHECK(contains(text,
                 "block 0  keys 0..1  scores 1.0, 3.0\n  correct       m=3.0 scale=0.000 l=1.1353 "
                 "output so far=18.808\n"));
  CHECK(contains(text, "  correct       m=5.0 scale=0.135 l=1.2034 output so far=36.881\n"));
  CHECK(contains(text, "  correct       m=5.0 scale=1.000 l=1.5824 output so far=42.347\n"));
  CHECK(contains(text, "online=42.347429"));
  CHECK(contains(text, "answer=42.347429"));
  // The bug: block 0's output is not rescaled when the max rises to 5 in block 1, so O lands above.
  CHECK(contains(text, "  unrescaled-o  m=5.0 scale=0.135 l=1.2034 output so far=52.223\n"));
  CHECK(contains(text, "unrescaled-o (O accumulator not multiplied"));
  CHECK(contains(text, "departs from the correct state at block 1; ends at 54.015264, above the answer"));
  CHECK(contains(text, "scale=0 in block 0 is exp(-inf - 3.0)"));
  REQUIRE(x.variants.size() == 2);
  CHECK(x.exact[0] == Approx(42.3474289).epsilon(1e-8));
}

TEST_CASE("fa-explain's CSV: the lesson's golden states at full precision, one line per block and variant",
          "[explain]") {
  ex::RowProblem const problem =
      ex::row_from_scores(kLessonScores, kLessonValues, 1, 1.0, fl::common::Precision::fp32);
  ex::Explanation const x = ex::explain_row(problem, 2, {mutants::MutantId::unrescaled_o});
  std::string const csv = ex::render_csv(x);
  INFO(csv);
  auto const rows = csv_rows(csv);
  REQUIRE(rows.size() == 1 + 3 * 2);  // the header, then 3 blocks x (correct, unrescaled-o) x 1 component
  CHECK(rows[0] == std::vector<std::string>{"step", "block", "first_key", "last_key", "variant", "dim", "m",
                                            "scale", "l", "output_so_far", "answer"});
  for (std::size_t i = 1; i < rows.size(); ++i) REQUIRE(rows[i].size() == rows[0].size());
  // Block 0, correct: m = 3, scale = exp(-inf) = 0, l = e^-2 + 1, output (10 e^-2 + 20) / l; the answer.
  std::vector<std::string> const& first = rows[1];
  CHECK(std::vector<std::string>(first.begin(), first.begin() + 6) ==
        std::vector<std::string>{"0", "0", "0", "1", "correct", "0"});
  CHECK(first[6] == "3");
  CHECK(first[7] == "0");
  CHECK(std::stod(first[8]) == Approx(1 + std::exp(-2.0)).epsilon(1e-15));
  CHECK(std::stod(first[9]) == Approx((10 * std::exp(-2.0) + 20) / (1 + std::exp(-2.0))).epsilon(1e-15));
  CHECK(std::stod(first[9]) == Approx(18.808).margin(5e-4));
  CHECK(std::stod(first[10]) == Approx(42.347429).margin(5e-7));
  // Block 1, unrescaled-o: 52.223 (the text's 3 decimals); the correct end equals the answer.
  CHECK(rows[4][4] == "unrescaled-o");
  CHECK(std::stod(rows[4][9]) == Approx(52.223).margin(5e-4));
  CHECK(rows[5][4] == "correct");
  CHECK(rows[5][0] == "2");
  CHECK(std::stod(rows[5][9]) == Approx(std::stod(rows[5][10])).epsilon(1e-13));
  CHECK(std::stod(rows[5][10]) == x.exact[0]);  // shortest form, read back exactly
}

TEST_CASE("fa-explain's CSV: steps in the order visited, a line per component, nan as nan", "[explain]") {
  ex::RowProblem const lesson =
      ex::row_from_scores(kLessonScores, kLessonValues, 1, 1.0, fl::common::Precision::fp32);
  auto const backwards = csv_rows(ex::render_csv(
      ex::explain_row(lesson, 2, {}, emulator::TraceArithmetic::fp64, emulator::KeyOrder::last_to_first)));
  REQUIRE(backwards.size() == 4);
  CHECK(std::vector<std::string>(backwards[1].begin(), backwards[1].begin() + 4) ==
        std::vector<std::string>{"0", "2", "4", "5"});
  ex::RowProblem const vector_row = ex::row_from_scores(
      std::vector<double>{0, 1}, std::vector<double>{1, 0, 0, 1}, 2, 1.0, fl::common::Precision::fp32);
  auto const dims = csv_rows(ex::render_csv(ex::explain_row(vector_row, 1, {})));
  REQUIRE(dims.size() == 1 + 2 * 2);  // 2 blocks x 2 components
  CHECK(dims[1][5] == "0");
  CHECK(dims[2][5] == "1");
  CHECK(dims[1][9] == "1");
  CHECK(dims[2][9] == "0");
  ex::RowProblem const masked =
      ex::row_from_scores(std::vector<double>{-INFINITY, -INFINITY, 1, 2}, std::vector<double>{1, 2, 3, 4}, 1,
                          1.0, fl::common::Precision::fp32);
  std::string const csv = ex::render_csv(ex::explain_row(masked, 2, {mutants::MutantId::masked_row_nan}));
  INFO(csv);
  CHECK(contains(csv, "\n0,0,0,1,correct,0,-inf,"));
  CHECK(contains(csv, ",masked-row-nan,0,"));
  CHECK(contains(csv, ",nan,"));
}

TEST_CASE("fa-explain follows vector values and the kernel's fp32 arithmetic", "[explain]") {
  // Two keys, values (1, 0) and (0, 1): the output is (softmax_0, softmax_1).
  ex::RowProblem const problem = ex::row_from_scores(
      std::vector<double>{0, 1}, std::vector<double>{1, 0, 0, 1}, 2, 1.0, fl::common::Precision::fp32);
  ex::Explanation const x = ex::explain_row(problem, 1, {}, emulator::TraceArithmetic::fp32);
  double const p1 = 1 / (1 + std::exp(-1.0));
  REQUIRE(x.variants.front().trace.output.size() == 2);
  CHECK(x.variants.front().trace.output[1] == Approx(p1).epsilon(1e-6));
  CHECK(x.variants.front().trace.blocks.front().output_so_far == std::vector<double>{1.0, 0.0});
  std::string const text = ex::render_text(problem, x);
  CHECK(contains(text, "output so far=[1.000, 0.000]"));
  CHECK(contains(text, "precision fp32 as a kernel computes it"));
}

TEST_CASE("fa-explain shows the masked and the all-negative bugs on the rows that expose them", "[explain]") {
  // A masked first block: without the guard, exp(-inf - (-inf)) is NaN.
  ex::RowProblem const masked =
      ex::row_from_scores(std::vector<double>{-INFINITY, -INFINITY, 1, 2}, std::vector<double>{1, 2, 3, 4}, 1,
                          1.0, fl::common::Precision::fp32);
  ex::Explanation const x = ex::explain_row(masked, 2, {mutants::MutantId::masked_row_nan});
  CHECK(std::isnan(x.variants[1].trace.output[0]));
  CHECK(x.variants[0].trace.output[0] == Approx(x.exact[0]));
  CHECK(contains(ex::render_text(masked, x), "masked-row-nan (no guard for a fully masked row"));
  // Every score far below 0 with a max started at 0: the fp32 weights underflow (float64's do not).
  ex::FamilyRowRequest request;
  request.family = InputFamily::all_negative;
  request.keys = 32;
  request.head_dim = 8;
  ex::RowProblem const negative = ex::row_from_family(request);
  ex::Explanation const y =
      ex::explain_row(negative, 8, {mutants::MutantId::m_init_zero}, emulator::TraceArithmetic::fp32);
  CHECK(std::fabs(y.variants[0].trace.output[0] - y.exact[0]) < 1e-5);
  CHECK(!(std::fabs(y.variants[1].trace.output[0] - y.exact[0]) < 1e-3));
}

TEST_CASE("fa-explain refuses what one row's forward cannot show, naming it", "[explain]") {
  ex::RowProblem const problem =
      ex::row_from_scores(kLessonScores, kLessonValues, 1, 1.0, fl::common::Precision::fp32);
  CHECK_THROWS_WITH(ex::explain_row(problem, 2, {mutants::MutantId::bwd_missing_delta}),
                    Catch::Contains("bwd-missing-delta is a backward bug"));
  CHECK_THROWS_WITH(ex::explain_row(problem, 2, {mutants::MutantId::fp8_p_overflow}),
                    Catch::Contains("--precision fp8_e4m3"));
  CHECK_THROWS_WITH(ex::explain_row(problem, 0, {}), Catch::Contains("--block 0"));
  CHECK_THROWS_WITH(
      ex::row_from_scores(kLessonScores, std::vector<double>{1, 2}, 1, 1.0, fl::common::Precision::fp32),
      Catch::Contains("--values has 2 numbers"));
  CHECK_THROWS_WITH(ex::row_from_scores(std::vector<double>{NAN}, std::vector<double>{1}, 1, 1.0,
                                        fl::common::Precision::fp32),
                    Catch::Contains("--scores"));
  CHECK(ex::explainable_mutants(fl::common::Precision::fp32, true).size() == 11);  // the forward kind
  CHECK(ex::explainable_mutants(fl::common::Precision::fp8_e4m3, false).size() == 13);
}
