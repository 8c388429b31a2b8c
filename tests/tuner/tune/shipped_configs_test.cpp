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

TEST_CASE("without a GPU, --measured-on answers from one GPU's rows where the database holds several",
          "[tuner][tune]") {
  test::TempKernelsDir dir;
  auto const db_path = dir.path() / "two_gpus.sqlite";
  auto const family = find_family("fa2_sm80");
  auto const problem = headline_problem(2048, 64, true, common::Precision::fp16, Direction::forward);
  // The same problem tuned on two cards, to two configs; the H200's row is the faster.
  struct Row {
    db::GpuKey gpu;
    char const* config;
    double tflops;
  };
  Row const rows[] = {{{"NVIDIA H200", 9, 0, 132, "580.159.04", 13000},
                       "kBlockM=128,kBlockN=64,kEpilogueSmem=1,kNWarps=4,kQInRegs=0,kStages=1,kWarpsN=1",
                       300.0},
                      {{"NVIDIA H100 80GB HBM3", 9, 0, 132, "580.95.05", 13000},
                       "kBlockM=64,kBlockN=64,kEpilogueSmem=1,kNWarps=4,kQInRegs=0,kStages=1,kWarpsN=1",
                       250.0}};
  {
    auto database = db::open_database(db_path);
    for (auto const& row : rows) {
      auto const config = parse_config(row.config);
      REQUIRE(config);
      REQUIRE_FALSE(family->violates(*config, problem));
      db::store_best_config(
          database, db::BestConfig{row.gpu, problem_key(problem), "fa2_sm80", row.config, 1.0, row.tflops,
                                   "measured", "13.0", "", "2026-12-06T00:00:00Z"});
    }
  }
  auto const kernels = runtime::resolve_kernels_dir(std::nullopt).value();
  auto const ask = [&](std::string const& measured_on) {
    return report_shipped_configs(runtime::TargetArch::sm_90a, kernels, db_path, {problem}, {"fa2_sm80"},
                                  measured_on);
  };

  auto const both = ask("");
  INFO(both.table << both.answers);
  REQUIRE(both.gpus.size() == 2);  // the shipped seeds are H200 rows too
  CHECK(both.gpus[0].first == "NVIDIA H100 80GB HBM3");
  CHECK(both.gpus[0].second == 1);
  CHECK_THAT(describe_gpus(both), Catch::Contains("NVIDIA H100 80GB HBM3 (1), NVIDIA H200 ("));
  CHECK(both.tuned == 1);
  CHECK_THAT(both.answers, Catch::Contains(rows[0].config) && Catch::Contains("on NVIDIA H200"));

  auto const h100 = ask("h100");  // any case, a part of the name
  INFO(h100.table << h100.answers);
  CHECK(h100.measured_on_matched);
  CHECK(h100.configs == 1);
  CHECK(h100.tuned == 1);
  CHECK_THAT(h100.answers, Catch::Contains(rows[1].config) && Catch::Contains("on NVIDIA H100 80GB HBM3"));
  CHECK_THAT(h100.table, Catch::Contains("NVIDIA H100 80GB HBM3 driver 580.95.05"));
  CHECK(h100.table.find("NVIDIA H200") == std::string::npos);

  auto const none = ask("A100");
  CHECK_FALSE(none.measured_on_matched);
  CHECK(none.answers.empty());
  CHECK(none.gpus.size() == 2);  // what the refusal names
}
