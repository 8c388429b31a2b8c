#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "tuner/report/progress.hpp"

using fl::tuner::Progress;

namespace {
std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text.push_back(char(c));
  return text;
}
}  // namespace

TEST_CASE("progress status shows done/total, rate, ETA and the best so far", "[tuner][progress]") {
  std::FILE* f = std::tmpfile();
  Progress p("compile", 10, f, false);
  p.advance(5);
  p.set_best("kBlockM=128 300 TFLOP/s");
  auto const line = p.status_line(Progress::Clock::now() + std::chrono::seconds(5));
  CHECK(line.find("compile 5/10") == 0);
  CHECK(line.find("ETA") != std::string::npos);
  CHECK(line.find("best: kBlockM=128 300 TFLOP/s") != std::string::npos);
  std::fclose(f);
}

TEST_CASE("without a terminal progress writes plain lines, no carriage returns", "[tuner][progress]") {
  std::FILE* f = std::tmpfile();
  Progress p("time", 3, f, false);
  for (int i = 0; i < 3; ++i) p.advance();
  p.finish();
  auto const text = read_all(f);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find("time 3/3") != std::string::npos);
  std::fclose(f);

  std::FILE* t = std::tmpfile();
  Progress q("time", 2, t, true);
  q.advance();
  q.finish();
  CHECK(read_all(t).find('\r') != std::string::npos);
  std::fclose(t);
}

TEST_CASE(
    "a run's progress names the problem and candidate, counts the whole run, and its ETA stops at the "
    "deadline",
    "[tuner][progress]") {
  std::FILE* f = std::tmpfile();
  Progress p("fa-tune", 0, f, false);
  p.set_total(1000);
  auto const now = Progress::Clock::now();
  p.set_deadline(now + std::chrono::seconds(30));
  p.set_label("problem 2/6 fa2_sm80 b4 h16/16 n4096x4096 d128 bf16 full fwd: candidate 5/168, run");
  p.advance(10);
  // 10 done in ~100 s: 990 left would take ~9900 s, but the run ends at its deadline in 30 s.
  auto const line = p.status_line(now + std::chrono::seconds(100));
  CHECK_THAT(line,
             Catch::StartsWith("problem 2/6 fa2_sm80") && Catch::Contains("candidate 5/168, run 10/1000"));
  CHECK_THAT(line, Catch::Contains("ETA 0s"));
  std::fclose(f);
}
