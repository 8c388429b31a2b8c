// fa-stability-report's command line, through the binary: --help exits 0, every bad value (a stray word,
// a count out of range, a seed that would wrap, an unknown precision or family) is one line on stderr and
// exit code 2 before any work, and a tiny study writes results.csv.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "tests/tool_process.hpp"

namespace fs = std::filesystem;

namespace {

fl::test::ToolOutcome stability_report(std::string const& args) {
  return fl::test::run_tool(fl::test::sibling_binary("fa-stability-report").string() + " " + args);
}

fs::path scratch_dir() {
  return fs::temp_directory_path() / ("fl_stability_cli_" + std::to_string(::getpid()));
}

}  // namespace

TEST_CASE("fa-stability-report: --help explains and exits 0", "[tools][cli]") {
  auto const r = stability_report("--help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--block-n") != std::string::npos);
  CHECK(r.out.find("Golden et al.") != std::string::npos);
}

TEST_CASE("fa-stability-report: each bad value is one line and exit code 2, before any work",
          "[tools][cli]") {
  // "stray", "--threads -1", "--threads 5000" and "--seed -3" ran the whole study (the seed as 2^64 - 3).
  for (char const* args :
       {"stray", "--threads -1", "--threads 5000", "--seed -3", "--seed 1e3", "--seqlens 0", "--block-n x",
        "--precisions fp8_e4m3", "--precisions fp64", "--families nope", "--head-dim 1", "--no-such-option",
        // Beyond int, with junk, or beyond what any problem allows; an empty --out.
        "--head-dim 99999999999", "--head-dim 2x", "--head-dim 2000", "--out ''"}) {
    INFO(args);
    auto const r = stability_report(std::string(args) + " --out " + scratch_dir().string());
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.error_lines() == 1);
    CHECK(r.err.rfind("fa-stability-report: ", 0) == 0);
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(scratch_dir()));
  }
}

TEST_CASE("fa-stability-report: --seqlens has a stated range, each n named once", "[tools][cli]") {
  // 131073 ran (the study holds about 40 bytes per n x head dim, with no bound on n), 99999999999 named no
  // range, and a value named twice ran its rows twice.
  for (auto const& [value, complaint] :
       {std::pair{"131073", "--seqlens 131073 is not allowed (1..131072)"},
        std::pair{"64,99999999999", "--seqlens 99999999999 is not allowed (1..131072)"},
        std::pair{"64,64", "--seqlens 64,64: 64 is named twice"},
        std::pair{"64,,128", "--seqlens 64,,128: expected comma-separated positive integers"}}) {
    INFO(value);
    auto const r =
        stability_report(std::string("--seqlens ") + value +
                         " --block-n 16 --precisions bf16 --families normal --head-dim 8 --threads 1 "
                         "--out " +
                         scratch_dir().string());
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.error_lines() == 1);
    CHECK(r.err == std::string("fa-stability-report: ") + complaint + "\n");
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(scratch_dir()));
  }
}

TEST_CASE("fa-stability-report: an unusable --out is one line and exit code 2, before the study",
          "[tools][cli]") {
  fs::create_directories(scratch_dir());
  std::ofstream(scratch_dir() / "afile") << "x";
  fs::create_directories(scratch_dir() / "taken" / "results.csv");
  // results.csv a link into a folder that does not exist: it cannot be written.
  fs::create_directories(scratch_dir() / "linked");
  fs::create_symlink(scratch_dir() / "missing" / "results.csv", scratch_dir() / "linked" / "results.csv");
  // The first two ran the whole study, then aborted (SIGABRT) on an uncaught filesystem error.
  for (fs::path const& out :
       {scratch_dir() / "afile" / "sub", scratch_dir() / "afile", fs::path("/proc/flashlab-stability"),
        scratch_dir() / "taken", scratch_dir() / "linked"}) {
    INFO(out);
    auto const r = stability_report(
        "--seqlens 64 --block-n 16 --precisions bf16 --families normal "
        "--head-dim 8 --threads 1 --out " +
        out.string());
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.error_lines() == 1);
    CHECK(r.err.rfind("fa-stability-report: --out " + out.string() + ": ", 0) == 0);
    CHECK(r.out.empty());
  }
  fs::remove_all(scratch_dir());
}

TEST_CASE("fa-stability-report: a tiny study writes results.csv", "[tools][cli]") {
  fs::remove_all(scratch_dir());
  auto const r = stability_report(
      "--seqlens 64 --block-n 16 --precisions bf16 --families normal --head-dim 8 "
      "--threads 1 --seed 7 --out " +
      scratch_dir().string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto const csv = fl::test::read_text(scratch_dir() / "results.csv");
  CHECK(csv.rfind("family,precision,output,method,block_n,seqlen,head_dim", 0) == 0);
  // bf16 with O kept in bf16 and in fp32, each standard and tiled: four rows.
  CHECK(r.out.find("4 rows") != std::string::npos);
  fs::remove_all(scratch_dir());
}
