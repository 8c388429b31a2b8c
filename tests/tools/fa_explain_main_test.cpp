// fa-explain as a user runs it: the lesson's golden example on stdout, --help, and one line with exit code 2
// for each kind of bad input.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/tool_process.hpp"

namespace fs = std::filesystem;

namespace {

struct Run {
  int rc;
  std::string output;
};

Run run(std::string const& args) {
  fs::path const out = fs::temp_directory_path() / ("fl_fa_explain_" + std::to_string(::getpid()) + ".txt");
  int const rc = fl::test::shell_exit_code(fl::test::sibling_binary("fa-explain").string() + " " + args +
                                           " > " + out.string() + " 2>&1");
  Run r{rc, fl::test::read_text(out)};
  fs::remove(out);
  return r;
}

}  // namespace

TEST_CASE("fa-explain prints the lesson's example", "[explain][cli]") {
  REQUIRE(fs::exists(fl::test::sibling_binary("fa-explain")));
  Run const r = run("--scores 1,3,2,5,0.5,4 --values 10,20,30,40,50,60 --block 2");
  INFO(r.output);
  CHECK(r.rc == 0);
  CHECK(r.output.find("m=3.0 scale=0.000 l=1.1353 output so far=18.808") != std::string::npos);
  CHECK(r.output.find("online=42.347429") != std::string::npos);
  Run const help = run("--help");
  CHECK(help.rc == 0);
  CHECK(help.output.find("--mutant") != std::string::npos);
  CHECK(help.output.find("why scale = 0 in the first block") != std::string::npos);
}

TEST_CASE("fa-explain refuses bad input with one line and exit code 2", "[explain][cli]") {
  for (std::string const args :
       {"", "--scores 1,x --values 1,2", "--scores 1,2 --values 1", "--scores 1,2", "--family nope",
        "--scores 1,2 --values 1,2 --block 0", "--scores 1,2 --values 1,2 --mutant no-such-bug",
        "--scores 1,2 --values 1,2 --mutant bwd-race", "--scores 1,2 --values 1,2 --precision fp9",
        "--family normal --keys 8 --row 8", "--scores 1,2 --values 1,2 --family normal"}) {
    Run const r = run(args);
    INFO("args: " << args << "\n" << r.output);
    CHECK(r.rc == 2);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
}
