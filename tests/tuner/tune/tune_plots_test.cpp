// fa-tune --report on the recorded H200 run, replayed: the Markdown, the CSVs and (with gnuplot) the SVGs.
#include <catch2/catch.hpp>

#include <filesystem>

#include "common/gnuplot.hpp"
#include "runtime/kernel_source.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tests/tool_process.hpp"
#include "tuner/tune/replay_backend.hpp"
#include "tuner/tune/tune_plots.hpp"

using namespace fl;
using namespace fl::tuner;

TEST_CASE("the most important tunables are those whose values move the best TFLOP/s most",
          "[tuner][report]") {
  auto row = [](std::string config, double tflops) {
    db::Measurement m;
    m.verdict = "ok";
    m.median_ms = 1.0;
    m.tflops = tflops;
    return std::pair{std::move(config), m};
  };
  // TFLOP/s = 100 x 3 (kA=2) x 1.5 (kB=2) x 1.05 (kC=2) over the full grid.
  RunRows rows;
  for (int a : {1, 2})
    for (int b : {1, 2})
      for (int c : {1, 2})
        rows.push_back(
            row("kA=" + std::to_string(a) + ",kB=" + std::to_string(b) + ",kC=" + std::to_string(c),
                100.0 * (a == 2 ? 3.0 : 1.0) * (b == 2 ? 1.5 : 1.0) * (c == 2 ? 1.05 : 1.0)));
  CHECK((most_important_tunables(rows) == std::vector<std::string>{"kA", "kB"}));
}

TEST_CASE("the report writes Markdown, CSVs and SVG plots for the replayed H200 run", "[tuner][report]") {
  auto const fixture = std::filesystem::path(FA_TEST_DATA_DIR) / "fa2_sm80_h200_bf16_d128_n4096_full.tsv";
  if (!std::filesystem::exists(fixture)) {
    WARN("skipped: " << fixture << " is not committed");
    return;
  }
  test::TempKernelsDir dir;
  ReplayBackend replay(fixture);
  std::vector<char const*> argv{"fa-tune", "--seqlen", "4096", "--causal", "no"};
  auto const options = parse_tune_options(int(argv.size()), argv.data());
  auto const report = run_tuning(options, replay, runtime::resolve_kernels_dir(std::nullopt).value(),
                                 dir.path() / "db.sqlite");
  auto const out = dir.path() / "report";
  auto const written = write_tune_report(report, out);
  auto const md = test::read_text(out / "report.md");
  CHECK_THAT(md, Catch::Contains("kBlockM=128,kBlockN=32,kEpilogueSmem=1,kNWarps=4,kQInRegs=0,kStages=2"));
  CHECK_THAT(md, Catch::Contains("Best family per problem"));
  std::string const stem = "0_fa2_sm80_b4_h16_16_n4096x4096_d128_bf16_full_fwd";
  for (auto const* csv : {"_configs.csv", "_heatmap.csv", "_convergence_run.csv", "_convergence_bayes.csv"})
    CHECK(std::filesystem::exists(out / (stem + csv)));
  CHECK(std::filesystem::exists(out / "stages.csv"));
  // Sorted: 126 timed configs, the winner first and marked 2.
  auto const configs = test::read_text(out / (stem + "_configs.csv"));
  CHECK_THAT(configs, Catch::StartsWith("rank,tflops,mark,config\n1,302.42,2,"));
  if (!common::gnuplot_available("gnuplot")) {
    WARN("gnuplot is not installed: the SVGs are not checked");
    return;
  }
  CHECK(written.gnuplot_found);
  CHECK(written.plots_failed == 0);
  for (auto const* svg : {"_configs.svg", "_heatmap.svg", "_convergence.svg"}) {
    INFO(svg);
    auto const text = test::read_text(out / (stem + svg));
    CHECK_THAT(text, Catch::Contains("<svg"));
  }
  CHECK_THAT(md, Catch::Contains("_heatmap.svg)"));
  // The recording has no stage times: no empty plot of them, and the report says why.
  CHECK_FALSE(std::filesystem::exists(out / "stages.svg"));
  CHECK_THAT(md, Catch::Contains("No plot of the time by stage"));
  // With stage times (a GPU run), the plot is drawn.
  auto timed = report;
  timed.rows[0].compile_wait_s = 2.0;
  timed.rows[0].verify_s = 86.4;
  timed.rows[0].timing_s = 77.9;
  auto const timed_out = dir.path() / "timed";
  (void)write_tune_report(timed, timed_out);
  CHECK_THAT(test::read_text(timed_out / "stages.svg"), Catch::Contains("<svg"));
  CHECK_THAT(test::read_text(timed_out / "report.md"), Catch::Contains("(stages.svg)"));
}
