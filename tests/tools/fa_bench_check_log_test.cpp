// fa-bench's log of passed checks (tools/fa_bench_check_log): what is recorded is found again by a later
// run, a key names everything the verdict depends on, a torn or foreign line is ignored, and an unusable
// path is one line naming FA_BENCH_CHECK_LOG (exit code 2 through the command, before any GPU).
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tests/tool_process.hpp"
#include "tools/fa_bench_check_log.hpp"

namespace fs = std::filesystem;
using fl::tools::fa_bench::check_key;
using fl::tools::fa_bench::CheckLog;

namespace {
fs::path fresh_path(std::string const& name) {
  fs::path const p =
      fs::temp_directory_path() / ("fa_bench_check_log_" + std::to_string(::getpid()) + "_" + name);
  fs::remove(p);
  return p;
}
}  // namespace

TEST_CASE("fa-bench's check log finds what an earlier run recorded, and nothing else", "[tools][fa_bench]") {
  fs::path const path = fresh_path("roundtrip.tsv");
  {
    CheckLog log = CheckLog::open(path);  // created
    CHECK(fs::exists(path));
    CHECK_FALSE(log.passed("k1"));
    log.record("k1", "pass; O worst/bound 0.21\nsecond line");
    REQUIRE(log.passed("k1"));
    CHECK(*log.passed("k1") == "pass; O worst/bound 0.21 second line");  // one line per check
  }
  { std::ofstream(path, std::ios::app) << "no tab here\n\tempty key\nk2\ttorn: no newline"; }
  CheckLog const again = CheckLog::open(path);
  REQUIRE(again.passed("k1"));
  CHECK(*again.passed("k1") == "pass; O worst/bound 0.21 second line");
  CHECK_FALSE(again.passed("k2"));
  CHECK_FALSE(again.passed("no tab here"));
  CHECK_FALSE(again.passed(""));
  fs::remove(path);
}

TEST_CASE("a check's key changes with every part, and parts cannot slide into each other",
          "[tools][fa_bench]") {
  std::string const base = check_key("exe", "cubin", "H200", "fa2_sm80 kBlockM=128 b1 h16 n4096");
  CHECK(base.size() == 64);
  CHECK(base == check_key("exe", "cubin", "H200", "fa2_sm80 kBlockM=128 b1 h16 n4096"));
  CHECK(base != check_key("exe2", "cubin", "H200", "fa2_sm80 kBlockM=128 b1 h16 n4096"));
  CHECK(base != check_key("exe", "cubin2", "H200", "fa2_sm80 kBlockM=128 b1 h16 n4096"));
  CHECK(base != check_key("exe", "cubin", "H100", "fa2_sm80 kBlockM=128 b1 h16 n4096"));
  CHECK(base != check_key("exe", "cubin", "H200", "fa2_sm80 kBlockM=64 b1 h16 n4096"));
  CHECK(check_key("ab", "c", "d", "e") != check_key("a", "bc", "d", "e"));
  CHECK(fl::tools::fa_bench::executable_sha256().size() == 64);
}

TEST_CASE("an unusable FA_BENCH_CHECK_LOG is one line naming it, exit 2 before the GPU",
          "[tools][fa_bench]") {
  fs::path const bad = fs::temp_directory_path() / "fa_bench_no_such_dir" / "checks.tsv";
  CHECK_THROWS_WITH(CheckLog::open(bad), Catch::Contains("FA_BENCH_CHECK_LOG=" + bad.string()));
  fs::path const out = fresh_path("cli.txt");
  int const code = fl::test::shell_exit_code(
      "FA_BENCH_CHECK_LOG=" + bad.string() + " " + fl::test::sibling_binary("fa-bench").string() +
      " --family fa2_sm80 --head-dim 64 --seqlen 512 > " + out.string() + " 2>&1");
  std::string const text = fl::test::read_text(out);
  fs::remove(out);
  CHECK(code == 2);
  CHECK(text.find("FA_BENCH_CHECK_LOG=" + bad.string()) != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
}
