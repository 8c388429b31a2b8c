// fa-check under SIGINT / SIGTERM: the signal stops the check at the next slice of rows; the rows finished
// are printed and written to --json marked interrupted, and the exit code is 130 / 143.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/npy.hpp"
#include "numerics/seeded_random.hpp"
#include "tests/tool_process.hpp"

namespace fs = std::filesystem;

TEST_CASE(
    "fa-check stopped by SIGINT / SIGTERM writes the rows it checked, marked interrupted, exit 130 / 143",
    "[check][cli][signals]") {
  fs::path const dir = fs::temp_directory_path() / ("fl_fa_check_signal_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // 4096 query rows of 2048 keys: about 2 s of one core for the whole check, in 16 slices.
  std::vector<std::size_t> const shape = {1, 2, 2048, 64};
  fl::numerics::SeededRandom rng(7);
  std::vector<double> values(2 * 2048 * 64);
  for (char const* name : {"q", "k", "v"}) {
    for (double& x : values) x = rng.normal();
    fl::common::write_npy(dir / (std::string(name) + ".npy"), shape, values, fl::common::NpyDtype::float32);
  }
  std::fill(values.begin(), values.end(), 0.0);  // O = 0: wrong on every row
  fl::common::write_npy(dir / "o.npy", shape, values, fl::common::NpyDtype::float32);
  std::string files;
  for (char const* name : {"q", "k", "v", "o"})
    files += std::string(" --") + name + " " + (dir / name).string() + ".npy";

  for (int signal_number : {SIGINT, SIGTERM}) {
    auto const out = dir / "out.txt", json = dir / "r.json";
    fs::remove(json);
    // The signal goes once the check has used 0.4 s of CPU (a quarter of its rows, wherever the machine is).
    std::string const script = fl::test::sibling_binary("fa-check").string() + files +
                               " --dtype bf16 --threads 1 --json " + json.string() + " > " + out.string() +
                               " 2>&1 & pid=$!; while [ $(awk '{print $14 + $15}' /proc/$pid/stat) -lt 40 ]; "
                               "do sleep 0.02; done; kill -" +
                               std::to_string(signal_number) + " $pid; wait $pid";
    int const code = fl::test::shell_exit_code(script);
    std::string const printed = fl::test::read_text(out);
    INFO(printed);
    CHECK(code == 128 + signal_number);
    std::string const name = signal_number == SIGINT ? "SIGINT" : "SIGTERM";
    CHECK_THAT(printed, Catch::Contains("INTERRUPTED by " + name));
    CHECK_THAT(printed, Catch::Contains("(interrupted)"));
    std::string const report = fl::test::read_text(json);
    CHECK_THAT(report, Catch::Contains("\"interrupted\":\"" + name + "\""));
    CHECK_THAT(report, Catch::Contains("\"verdict\":\"fail\""));  // a failure found is a failure
    CHECK_THAT(report, Catch::Contains("\"total_query_rows\":4096"));
    auto const at = report.find("\"checked_query_rows\":");
    REQUIRE(at != std::string::npos);
    int const checked = std::stoi(report.substr(at + 21));
    CHECK(checked >= 256);  // whole slices of 256 rows
    CHECK(checked % 256 == 0);
    CHECK(checked < 4096);
    CHECK_FALSE(fs::exists(json.string() + ".tmp" + std::to_string(::getpid())));
  }
  fs::remove_all(dir);
}
