#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
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
