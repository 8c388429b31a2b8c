// fa-explain as a user runs it: the lesson's golden example on stdout, --help, and one line with exit code 2
// for each kind of bad input.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

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

TEST_CASE("fa-explain --csv writes the trace as data beside the text", "[explain][cli]") {
  fs::path const csv = fs::temp_directory_path() / ("fl_fa_explain_" + std::to_string(::getpid()) + ".csv");
  Run const r =
      run("--scores 1,3,2,5,0.5,4 --values 10,20,30,40,50,60 --block 2 --mutant unrescaled-l --csv " +
          csv.string());
  INFO(r.output);
  CHECK(r.rc == 0);
  CHECK(r.output.find("online=42.347429") != std::string::npos);  // the text as without --csv
  std::string const data = fl::test::read_text(csv);
  fs::remove(csv);
  CHECK_THAT(data,
             Catch::StartsWith("step,block,first_key,last_key,variant,dim,m,scale,l,output_so_far,answer\n"
                               "0,0,0,1,correct,0,3,0,1.1353352832366"));
  CHECK(std::count(data.begin(), data.end(), '\n') == 1 + 3 * 2);
  CHECK(data.find("\n2,2,4,5,unrescaled-l,0,5,1,") != std::string::npos);
  // A path that cannot take the file is refused before the work: one line, exit code 2.
  Run const folder = run("--scores 1,2 --values 1,2 --csv " + fs::temp_directory_path().string());
  CHECK(folder.rc == 2);
  CHECK_THAT(folder.output, Catch::StartsWith("fa-explain: --csv ") && Catch::Contains("folder"));
  CHECK(std::count(folder.output.begin(), folder.output.end(), '\n') == 1);
  CHECK(run("--help").output.find("--csv FILE") != std::string::npos);
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

TEST_CASE("fa-explain is as strict as every other command: strays, control bytes, wraps, ranges stated",
          "[explain][cli]") {
  std::string const scores = "--scores 1,3,2,5 --values 10,20,30,40 ";
  std::string const family = "--family normal ";
  // Each of these exited 0 (ignored, wrapped or shown twice), crashed (--keys 100000000: bad_alloc),
  // ran for minutes (--keys 20000000), broke the complaint over two lines (the newline) or said
  // "the argument ('99999999999') for option '--block' is invalid" without the range.
  for (auto const& [args, named] : std::vector<std::pair<std::string, std::string>>{
           {scores + "stray", "unexpected argument 'stray'"},
           {scores + "--key-order \"$(printf 'a\\nb')\"", "'a\\x0ab' holds a control byte"},
           {family + "--seed -1", "--seed -1 is not allowed (0..9223372036854775807)"},
           {family + "--seed 99999999999999999999", "--seed 99999999999999999999 is not allowed (0.."},
           {family + "--keys 100000000", "--keys 100000000 is not allowed (1..65536)"},
           {family + "--keys 20000000", "--keys 20000000 is not allowed (1..65536)"},
           {family + "--keys 0", "--keys 0 is not allowed (1..65536)"},
           {family + "--keys 64x", "--keys '64x' is not allowed (a whole number, 1..65536)"},
           {family + "--keys 8 --row 8", "--row 8 is not allowed (0..7"},
           {family + "--row -2", "--row -2 is not allowed (0..65535)"},
           {family + "--head-dim 1", "--head-dim 1 is not allowed (2..1024"},
           {family + "--head-dim 5000", "--head-dim 5000 is not allowed (1..1024)"},
           {scores + "--head-dim 0", "--head-dim 0 is not allowed (1..1024)"},
           {scores + "--block 99999999999", "--block 99999999999 is not allowed (1..1024)"},
           {scores + "--block 0", "--block 0 is not allowed (1..1024)"},
           {scores + "--show-dims 0", "--show-dims 0 is not allowed (1..1024)"},
           {scores + "--show-dims 999999999", "--show-dims 999999999 is not allowed (1..1024)"},
           {scores + "--softmax-scale 1x", "--softmax-scale '1x' is not allowed (a positive finite number)"},
           {scores + "--softmax-scale 0", "--softmax-scale '0' is not allowed (a positive finite number)"},
           {scores + "--mutant unrescaled-o,unrescaled-o", "--mutant unrescaled-o is named twice"},
           {scores + "--mutant all --mutant unrescaled-o", "--mutant unrescaled-o is named twice"},
           {scores + "--seed 5", "--seed is for a --family draw"},
           {scores + "--keys 5", "--keys is for a --family draw"},
           {scores + "--causal", "--causal is for a --family draw"},
           {family + "--softmax-scale 2", "--softmax-scale is for given --scores"}}) {
    Run const r = run(args);
    INFO("args: " << args << "\n" << r.output);
    CHECK(r.rc == 2);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_THAT(r.output, Catch::StartsWith("fa-explain: ") && Catch::Contains(named));
  }
  // The ranges' ends are allowed.
  CHECK(run(family + "--keys 1 --block 1 --row 0 --head-dim 2 --show-dims 1").rc == 0);
  CHECK(run(scores + "--block 1024 --show-dims 1024 --softmax-scale 0.5").rc == 0);
  Run const help = run("--help");
  CHECK_THAT(help.output, Catch::Contains("(1..65536)") && Catch::Contains("0..keys-1"));
}
