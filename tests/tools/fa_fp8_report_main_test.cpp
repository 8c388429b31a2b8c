// fa-fp8-report's command line: every bad value is one line and exit 2 before the study starts.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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

TEST_CASE("fa-fp8-report refuses a file it would write inside --out before the study, in one line",
          "[numerics][fa-fp8-report]") {
  fs::path const dir = fs::temp_directory_path() / ("fl_fp8_report_files_" + std::to_string(::getpid()));
  // Each of these ran the whole study and then failed on the write (exit 1): report.md or a plot that is a
  // folder, results.csv linked into a folder that does not exist.
  for (std::string const file : {"report.md", "results.csv", "o_rmse_vs_head_dim.svg", "backward_rmse.svg",
                                 "o_rmse_vs_n_fa3_outliers.svg"}) {
    for (bool const as_link : {false, true}) {
      fs::remove_all(dir);
      fs::create_directories(dir / "out");
      if (as_link)
        fs::create_symlink(dir / "missing" / file, dir / "out" / file);
      else
        fs::create_directories(dir / "out" / file);
      auto const outcome = fl::test::run_tool(
          fl::test::sibling_binary("fa-fp8-report").string() + " --out " + (dir / "out").string() +
          " --head-dims 64 --seqlens 64 --backward-seqlens 64 --backward-head-dims 64 --fp8-variants none "
          "--threads 1");
      INFO(file << (as_link ? " (a dangling link)" : " (a folder)") << " -> " << outcome.exit_code << ": "
                << outcome.err);
      CHECK(outcome.exit_code == 2);
      CHECK(outcome.error_lines() == 1);
      CHECK(outcome.err.rfind("fa-fp8-report: --out " + (dir / "out").string() + ": " + file + " ", 0) == 0);
      CHECK(outcome.out.empty());
      // Nothing written beside the planted entry.
      CHECK(std::distance(fs::directory_iterator(dir / "out"), fs::directory_iterator()) == 1);
    }
  }
  fs::remove_all(dir);
}
