// fa-fp8-report's command line: every bad value is one line and exit 2 before the study starts.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/tool_process.hpp"

namespace fs = std::filesystem;

TEST_CASE("fa-fp8-report refuses bad values before the study, in one line", "[numerics][fa-fp8-report]") {
  fs::path const dir = fs::temp_directory_path() / ("fl_fp8_report_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "afile") << "x";
  std::string const base = fl::test::sibling_binary("fa-fp8-report").string() + " --out " +
                           (dir / "out").string() + " --seqlens 64 --backward-seqlens 64 ";
  auto refused = [&](std::string const& args, std::string const& named) {
    auto const outcome = fl::test::run_tool(base + args);
    INFO(args << " -> " << outcome.exit_code << ": " << outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.error_lines() == 1);
    CHECK_THAT(outcome.err, Catch::Contains(named));
  };
  // Was: the whole forward grid ran, then "terminate called" (exit 134) in the backward grid.
  refused("--head-dims 64 --backward-head-dims 7", "--backward-head-dims 7: must be a power of two");
  refused("--head-dims 2048", "--head-dims 2048 is not allowed (1..1024)");
  refused("--head-dims 64,,128", "--head-dims 64,,128: expected comma-separated positive integers");
  refused("--head-dims 64 --seed -1", "--seed -1 is not allowed");  // was seed 2^64 - 1
  refused("--head-dims 64 --threads 99999", "--threads 99999 is not allowed");
  refused("--head-dims 64 stray", "unexpected argument 'stray'");  // was ignored
  refused("--head-dims 64 --fp8-variants two_term_k", "--fp8-variants two_term_k: expected");
  refused("--head-dims 64 --fp8-variants two_term_q+two_term_q", "--fp8-variants two_term_q+two_term_q");
  refused("--head-dims 64 --full-rows-up-to 999999", "--full-rows-up-to 999999 is not allowed");
  // Beyond int the range was not named ("expected comma-separated positive integers", "the argument
  // ('99999999999') for option '--full-rows-up-to' is invalid"); a head dim named twice ran twice.
  refused("--head-dims 99999999999", "--head-dims 99999999999 is not allowed (1..1024)");
  refused("--head-dims 64,64", "--head-dims 64,64: 64 is named twice");
  refused("--head-dims 64 --full-rows-up-to 99999999999",
          "--full-rows-up-to 99999999999 is not allowed (0..65536)");
  refused("--head-dims 64 --threads 1x", "--threads '1x' is not allowed (a whole number, 0..1024");
  refused("--head-dims 64 --gnuplot ''", "--gnuplot '' is empty");
  // Was an uncaught std::filesystem error (abort) after the study.
  auto const under_file = fl::test::run_tool(fl::test::sibling_binary("fa-fp8-report").string() + " --out " +
                                             (dir / "afile" / "sub").string());
  CHECK(under_file.exit_code == 2);
  CHECK_THAT(under_file.err, Catch::Contains("afile is not a folder"));
  CHECK(!fs::exists(dir / "out"));
  fs::remove_all(dir);
}
