// fa-tune without a GPU (tuner/tune/shipped_configs.hpp): once the headline grid is shipped the database
// knows hundreds of best configs; a question about one problem lists and compile-checks only the rows its
// answers use, and counts the rest, instead of compiling every shipped program (minutes on a laptop).
#include <catch2/catch.hpp>

#include "db/schema.hpp"
#include "device/families/registry.hpp"
#include "runtime/kernel_source.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tuner/tune/db_rows.hpp"
#include "tuner/tune/shipped_configs.hpp"
#include "tuner/tune/tune_loop.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;

namespace {
int rows_naming(std::string const& table, std::string const& text) {
  int rows = 0;
  for (std::size_t at = table.find(text); at != std::string::npos; at = table.find(text, at + 1)) ++rows;
  return rows;
}
}  // namespace

TEST_CASE("without a GPU only the best configs that answer the problems asked are compile-checked",
          "[tuner][tune]") {
  test::TempKernelsDir dir;
  auto const db_path = dir.path() / "known.sqlite";
  auto const family = find_family("fa2_sm80");
  constexpr int kKnown = 6;
  {
    auto database = db::open_database(db_path);
    int const seqlens[kKnown] = {1024, 2048, 4096, 8192, 16384, 512};
    for (int n : seqlens) {
      auto const problem = headline_problem(n, 64, true, common::Precision::fp16, Direction::forward);
      db::store_best_config(database, db::BestConfig{{"NVIDIA H200", 9, 0, 132, "580.159.04", 13000},
                                                     problem_key(problem),
                                                     "fa2_sm80",
                                                     to_string(family->default_config(problem)),
                                                     1.0,
                                                     100.0 + n / 1024.0,
                                                     "measured",
                                                     "13.0",
                                                     "",
                                                     "2026-12-01T00:00:00Z"});
    }
  }
  auto const asked = headline_problem(2048, 64, true, common::Precision::fp16, Direction::forward);
  auto const near = headline_problem(3000, 64, true, common::Precision::fp16, Direction::forward);
  auto const report =
      report_shipped_configs(runtime::TargetArch::sm_90a, runtime::resolve_kernels_dir(std::nullopt).value(),
                             db_path, {asked, near}, {"fa2_sm80"});
  INFO(report.table << report.answers);
  CHECK(report.configs >= kKnown);  // ours and the shipped seeds
  CHECK(report.tuned == 1);
  CHECK(report.nearest == 1);
  // n2048's own row, and the row of n3000's nearest tuned n (4096: nearer in n and in batch): 2 of >= 6.
  CHECK(report.listed == 2);
  CHECK(rows_naming(report.table, "fp16 causal fwd") == 2);
  CHECK(rows_naming(report.table, "  yes") == 2);
  CHECK(report.compile_failures == 0);
}
