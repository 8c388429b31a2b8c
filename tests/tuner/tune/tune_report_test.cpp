#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tuner/tune/recorded_measurements.hpp"
#include "tuner/tune/tune_command.hpp"

using namespace fl::tuner;

namespace {
TuningReport one_row() {
  TuningReport report;
  report.gpu = {"NVIDIA H200", 9, 0, 132, "580.159.04", 13000};
  report.nvrtc_version = "13.0";
  report.compile_workers = 16;
  TuneRow row;
  row.family = "fa2_sm80";
  row.problem = "b4 h16/16 n4096x4096 d128 bf16 full fwd";
  row.best_config = "kBlockM=128";
  row.best_ms = 1.79;
  row.best_tflops = 307.0;
  row.default_config = "kBlockM=64";
  row.default_verdict = "failed";
  row.default_diagnosis = "launch: CUDA_ERROR_ILLEGAL_ADDRESS\tafter";
  fl::db::Measurement ok;
  ok.verdict = "ok";
  ok.median_ms = 1.79;
  ok.p20_ms = 1.78;
  ok.p80_ms = 1.80;
  ok.tflops = 307.0;
  fl::db::Measurement bad;
  bad.verdict = "failed";
  bad.diagnosis = row.default_diagnosis;
  row.candidates = {{"kBlockM=64", bad}, {"kBlockM=128", ok}};
  row.costs = {{}, {.compile_wait_ms = 2.0, .compile_ms = 300.0, .verify_ms = 700.0, .timing_ms = 600.0}};
  row.end = SearchEnd::exhausted;
  row.space_size = 2;
  row.noise.push_back(compare_runs(row.candidates, row.candidates, 2));
  report.rows.push_back(row);
  return report;
}
}  // namespace

TEST_CASE("the measurement export is the fixture format: one row per candidate, one line each",
          "[tuner][tune]") {
  auto const tsv = measurements_tsv(one_row(), "fa-tune --arch sm90");
  std::stringstream in(tsv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] ==
        "family\tproblem\tconfig\tverdict\tmedian_ms\tp20_ms\tp80_ms\ttflops\tdiagnosis\tcompile_wait_ms\t"
        "compile_ms\tverify_ms\ttiming_ms");
  CHECK(lines[1] ==
        "fa2_sm80\tb4 h16/16 n4096x4096 d128 bf16 full fwd\tkBlockM=64\tfailed\t\t\t\t\tlaunch: "
        "CUDA_ERROR_ILLEGAL_ADDRESS after\t0.0\t0.0\t0.0\t0.0");
  CHECK(lines[2] ==
        "fa2_sm80\tb4 h16/16 n4096x4096 d128 bf16 full fwd\tkBlockM=128\tok\t1.79000\t1.78000\t"
        "1.80000\t307.00\t\t2.0\t300.0\t700.0\t600.0");
  CHECK_THAT(tsv, Catch::Contains("driver 580.159.04 (CUDA driver API 13000)"));
}

TEST_CASE("the table says why the default is not ok and where the time went", "[tuner][tune]") {
  auto const text = render_tuning(one_row());
  CHECK_THAT(text, Catch::Contains("default failed") && Catch::Contains("CUDA_ERROR_ILLEGAL_ADDRESS") &&
                       Catch::Contains("waited for compiles") && Catch::Contains("same winner"));
}

TEST_CASE("the footer splits the verification time where the evaluator measured its parts", "[tuner][tune]") {
  auto report = one_row();
  report.rows[0].verify_s = 3.5;
  // A replay (or another evaluator) does not measure the parts: the footer gives the whole only.
  CHECK_THAT(render_tuning(report),
             Catch::Contains("verification 3.5 s, timing") && !Catch::Contains("small problem"));
  report.rows[0].verify_sets_s = 0.7;
  report.rows[0].verify_small_s = 0.4;
  report.rows[0].verify_timed_run_s = 2.0;
  auto const text = render_tuning(report);
  CHECK_THAT(text, Catch::Contains("verification 3.5 s (building its sets 0.7 s, small problem 0.4 s, timed "
                                   "problem's run 2.0 s, its verdict 0.4 s), timing"));
  auto const json = tuning_json(report, "NVIDIA H200 (test)");
  CHECK_THAT(json, Catch::Contains("\"verify_sets_s\": 0.700") &&
                       Catch::Contains("\"verify_small_s\": 0.400") &&
                       Catch::Contains("\"verify_timed_run_s\": 2.000"));
}

TEST_CASE("a recorded export reads back as the rows it was written from", "[tuner][tune]") {
  auto const tsv = measurements_tsv(one_row(), "fa-tune --arch sm90");
  auto const path = std::filesystem::temp_directory_path() / "fl_tune_report_roundtrip.tsv";
  { std::ofstream(path) << tsv; }
  auto const recording = read_recording(path);
  std::filesystem::remove(path);
  auto const problem = std::string("b4 h16/16 n4096x4096 d128 bf16 full fwd");
  REQUIRE(recording.rows.size() == 2);
  auto const& ok = recording.rows.at({"fa2_sm80", problem, "kBlockM=128"});
  CHECK(ok.measurement.verdict == "ok");
  CHECK(*ok.measurement.median_ms == Approx(1.79));
  CHECK(*ok.verify_ms == Approx(700.0));
  CHECK(recording.rows.at({"fa2_sm80", problem, "kBlockM=64"}).measurement.verdict == "failed");
  CHECK((recording.order.at({"fa2_sm80", problem}) == std::vector<std::string>{"kBlockM=64", "kBlockM=128"}));
  CHECK_THAT(recording.gpu_line, Catch::StartsWith("GPU NVIDIA H200"));
}

// Issue 14 item 7: --json has every field of the table. Every column of the table (read from its header, so a
// column added later without a JSON field fails here) maps to a key of the JSON row, with the same value.
TEST_CASE("every column of the table is a field of --json, with the same value", "[tuner][tune]") {
  auto report = one_row();
  report.rows[0].evaluated = 1;
  report.rows[0].resumed = 1;
  report.rows[0].rejected = 1;
  report.rows[0].default_tflops = 290.0;
  auto const& r = report.rows[0];
  auto const table = render_tuning(report);
  auto const json = tuning_json(report, "NVIDIA H200 (test)");

  std::istringstream lines(table);
  std::string header;
  while (std::getline(lines, header) && header.rfind("family", 0) != 0) {
  }
  REQUIRE_FALSE(header.empty());
  std::vector<std::string> columns;  // the header's cells: separated by two or more spaces
  for (std::size_t at = 0; at < header.size();) {
    auto const end = header.find("  ", at);
    columns.push_back(header.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = header.find_first_not_of(' ', end);
  }
  auto const fixed = [](double v, int digits) {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(digits);
    s << v;
    return s.str();
  };
  std::map<std::string, std::string> const field_of_column{
      {"family", "\"family\": \"" + r.family + "\""},
      {"problem", "\"problem\": \"" + r.problem + "\""},
      {"best config", "\"best_config\": \"" + r.best_config + "\""},
      {"ms", "\"median_ms\": " + fixed(r.best_ms, 5)},
      {"TFLOP/s", "\"tflops\": " + fixed(r.best_tflops, 2)},
      {"vs default", "\"vs_default\": " + fixed(r.best_tflops / r.default_tflops, 4)},
      {"searched", "\"searched\": 2, \"space_size\": 2"},
      {"ended", "\"ended\": \"space done\""},
      {"measured", "\"measured\": 1"},
      {"resumed", "\"resumed\": 1"},
      {"rejected", "\"rejected\": 1"},
  };
  CHECK(columns.size() == field_of_column.size());
  for (auto const& column : columns) {
    INFO("table column '" << column << "'");
    REQUIRE(field_of_column.contains(column));
    CHECK_THAT(json, Catch::Contains(field_of_column.at(column)));
  }
  // And what the table's footer lines say per row: the default's verdict and why, where the time went.
  for (auto const* key :
       {"\"default_verdict\": \"failed\"", "\"default_diagnosis\": ", "\"wall_s\": ", "\"compile_wait_s\": ",
        "\"verify_s\": ", "\"timing_s\": ", "\"compile_cpu_s\": ", "\"timing_cut\": ", "\"faults\": [",
        "\"reference_s\": ", "\"split\": ", "\"cross_check\": ", "\"stop_signal\": ", "\"context_lost\": "})
    CHECK_THAT(json, Catch::Contains(key));
  // And the line above the table: how every candidate was timed (tuning_protocol.hpp).
  CHECK_THAT(table, Catch::Contains("timed: 5 warm-up runs, no settle, then the median of 30 runs"));
  CHECK_THAT(json, Catch::Contains("\"timing\": {\"warmup_runs\": 5, \"settle_ms\": 0, \"timed_runs\": 30}"));
}

TEST_CASE("the footer and --json say where the backward forwards came from", "[tuner][tune]") {
  auto report = one_row();
  CHECK_THAT(render_tuning(report), !Catch::Contains("backward forwards"));
  report.forwards = {.ahead = 3, .kept = 0, .stored = 2};
  CHECK_THAT(render_tuning(report),
             Catch::Contains("backward forwards: 3 computed ahead, 2 read from the forward store"));
  CHECK_THAT(tuning_json(report, "NVIDIA H200 (test)"),
             Catch::Contains("\"forwards\": {\"ahead\": 3, \"kept\": 0, \"stored\": 2}"));
  report.forwards.sets_ahead = 9;  // forward problems' sets built ahead
  CHECK_THAT(render_tuning(report), Catch::Contains("; forward sets: 9 built ahead"));
  CHECK_THAT(tuning_json(report, "NVIDIA H200 (test)"), Catch::Contains("\"sets_ahead\": 9"));
}
