#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "tuner/bench_table.hpp"

using fl::tuner::BenchRow;

namespace {
BenchRow row(std::string check, bool passed) {
  BenchRow r;
  r.family = "fa3_sm90";
  r.config = "kBlockM=128,kBlockN=128";
  r.dtype = "bf16";
  r.mask = "full";
  r.direction = "fwd";
  r.check = std::move(check);
  r.passed = passed;
  return r;
}
std::string last_line(std::string const& text) {  // text ends with '\n'
  auto const start = text.rfind('\n', text.size() - 2) + 1;
  return text.substr(start, text.size() - 1 - start);
}
}  // namespace

TEST_CASE("fa-bench's CSV carries the verdict as its last column", "[tuner][bench_table]") {
  auto const csv = fl::tuner::to_csv({row("pass max_abs 1e-3", true), row("FAIL: unrescaled O", false)});
  CHECK(csv.substr(0, csv.find('\n')).ends_with(",heads_kv,seqlen_k,passed"));
  CHECK(csv.find("\"pass max_abs 1e-3\",0,0,true\n") != std::string::npos);
  CHECK(last_line(csv).ends_with("\"FAIL: unrescaled O\",0,0,false"));
}

TEST_CASE("fa-bench's CSV doubles a quote inside a quoted field", "[tuner][bench_table]") {
  auto const csv = fl::tuner::to_csv({row("compile failed: \"kBlockN\" too large", false)});
  CHECK(last_line(csv).find(",\"compile failed: \"\"kBlockN\"\" too large\",") != std::string::npos);
}

TEST_CASE("fa-bench's JSON carries the verdict and escapes control characters", "[tuner][bench_table]") {
  auto const json = fl::tuner::to_json({row("line one\nline \"two\"", true)}, "H200", "2026-12-07");
  CHECK(json.find("\"check\": \"line one\\u000aline \\\"two\\\"\"") != std::string::npos);
  CHECK(json.find("\"passed\": true}") != std::string::npos);
  CHECK(json.find('\n', json.find("\"check\"")) > json.find("\"passed\""));  // no raw newline in the row
}

TEST_CASE("fa-bench's JSON names every CSV column, in the CSV's order", "[tuner][bench_table]") {
  auto const csv = fl::tuner::to_csv({row("pass", true)});
  auto const json = fl::tuner::to_json({row("pass", true)}, "H200", "2026-12-07");
  std::string const header = csv.substr(0, csv.find('\n')) + ",";
  std::size_t at = 0;
  for (std::size_t start = 0, comma; (comma = header.find(',', start)) != std::string::npos;
       start = comma + 1) {
    auto const name = "\"" + header.substr(start, comma - start) + "\": ";
    auto const found = json.find(name, at);
    INFO(name);
    REQUIRE(found != std::string::npos);
    at = found;
  }
}

TEST_CASE("fa-bench's samples CSV: one line per timed run, with its input set and UTC end",
          "[tuner][bench_table]") {
  BenchRow r = row("pass", true);
  r.seqlen = r.seqlen_k = 4096;
  r.input_sets = 3;
  // 2026-12-07T21:40:01.000250Z and 2 ms later; launches 5 and 6 after 5 warm-up runs.
  std::chrono::system_clock::time_point const t{std::chrono::microseconds(1'796'679'601'000'250LL)};
  r.samples = {{1.25, 5, t}, {1.5, 6, t + std::chrono::milliseconds(2)}};
  BenchRow unrun = row("FAIL: unrescaled O", false);  // failed its check: timed nothing, writes no line
  auto const csv = fl::tuner::to_samples_csv({r, unrun});
  CHECK(csv ==
        "family,config,dtype,mask,direction,batch,heads,seqlen,head_dim,heads_kv,seqlen_k,run,input_set,ms,"
        "ended_utc\n"
        "fa3_sm90,\"kBlockM=128,kBlockN=128\",bf16,full,fwd,0,0,4096,0,0,4096,0,2,1.25,"
        "2026-12-07T21:40:01.000250Z\n"
        "fa3_sm90,\"kBlockM=128,kBlockN=128\",bf16,full,fwd,0,0,4096,0,0,4096,1,0,1.5,"
        "2026-12-07T21:40:01.002250Z\n");
}
