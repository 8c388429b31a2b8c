// fa-bench's command line, through the binary itself: --help exits 0, every bad value is one line on
// stderr and exit code 2, and a valid command reaches the device check (exit 3 without a GPU, 0/1 with).
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "tests/tool_process.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Run {
  int code = -1;
  std::string output;
};

Run run(std::string const& args) {
  fs::path const out = fs::temp_directory_path() / ("fa_bench_cli_" + std::to_string(::getpid()) + ".txt");
  int const code = fl::test::shell_exit_code(fl::test::sibling_binary("fa-bench").string() + " " + args +
                                             " > " + out.string() + " 2>&1");
  std::string text = fl::test::read_text(out);
  fs::remove(out);
  return {code, std::move(text)};
}

std::size_t lines(std::string const& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("fa-bench: --help explains and exits 0", "[tuner][cli]") {
  Run const r = run("--help");
  CHECK(r.code == 0);
  CHECK(r.output.find("--launch-once") != std::string::npos);
  CHECK(r.output.find("--batch") != std::string::npos);
}

TEST_CASE("fa-bench: each bad value is one line and exit code 2", "[tuner][cli]") {
  for (std::string const args :
       {"--runs 3", "--dtype fp32", "--family nope", "--causal maybe", "--direction up", "--batch 0",
        "--heads -1", "--launch-once --check-only", "--launch-once --direction bwd", "--config kBlockM",
        "--mutant UNRESCALED_O", "--no-such-option"}) {
    INFO(args);
    Run const r = run(args);
    INFO(r.output);
    CHECK(r.code == 2);
    CHECK(lines(r.output) == 1);
    CHECK(r.output.rfind("fa-bench: ", 0) == 0);
  }
}
