// fa-bench's command line, through the binary itself: --help exits 0, every bad value is one line on
// stderr and exit code 2, and a valid command reaches the device check (exit 3 without a GPU, 0/1 with).
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "device/families/registry.hpp"
#include "tests/tool_process.hpp"
#include "tuner/cli/bench_options.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

// One line on stderr, "fa-bench: ...", exit code 2.
void check_refused(std::string const& args) {
  INFO(args);
  Run const r = run(args);
  INFO(r.output);
  CHECK(r.code == 2);
  CHECK(lines(r.output) == 1);
  CHECK(r.output.rfind("fa-bench: ", 0) == 0);
}

}  // namespace

TEST_CASE("fa-bench: --help explains and exits 0", "[tuner][cli]") {
  Run const r = run("--help");
  CHECK(r.code == 0);
  CHECK(r.output.find("--launch-once") != std::string::npos);
  CHECK(r.output.find("--batch") != std::string::npos);
}

TEST_CASE("fa-bench: each bad value is one line and exit code 2", "[tuner][cli]") {
  for (char const* args :
       {"--runs 3", "--dtype fp32", "--family nope", "--causal maybe", "--direction up", "--batch 0",
        "--heads -1", "--launch-once --check-only", "--launch-once --direction bwd", "--config kBlockM",
        "--mutant UNRESCALED_O", "--no-such-option", "--fp8-quantize gpu", "--fp8-pv fp16"}) {
    check_refused(args);
  }
}

TEST_CASE("fa-bench --fp8-pv bf16: fa3_sm90 with host-quantised operands only, judged before the GPU",
          "[tuner][cli][fp8]") {
  for (char const* args : {"--family fa2_fp8 --dtype fp8_e4m3 --fp8-pv bf16",
                           "--family fa3_sm90 --dtype fp8_e4m3 --fp8-pv bf16 --fp8-quantize device",
                           "--family fa2_fp8 --dtype fp8_e4m3 --fp8-pv bf16 --error-study x.csv"})
    check_refused(args);
  CHECK(run("--help").output.find("--fp8-pv") != std::string::npos);
}

TEST_CASE("fa-bench --fp8-v-layout transposed: fa3_sm90's FP8 P.V without kTransposeV, judged before the GPU",
          "[tuner][cli][fp8]") {
  for (char const* args :
       {"--family fa3_sm90 --dtype fp8_e4m3 --fp8-v-layout cols",
        "--family fa3_sm90 --dtype fp8_e4m3 --fp8-v-layout transposed --fp8-pv bf16",
        "--family fa3_sm90 --dtype bf16 --fp8-v-layout transposed",
        "--family fa3_sm90 --dtype fp8_e4m3,fp16 --fp8-v-layout transposed",
        "--family fa3_sm90 --dtype fp8_e4m3 --fp8-v-layout transposed --config kTransposeV=1",
        "--family fa2_fp8 --dtype fp8_e4m3 --fp8-v-layout transposed",
        "--family fa3_sm90 --dtype fp8_e4m3 --fp8-v-layout transposed --error-study x.csv"})
    check_refused(args);
  // What `transposed` means: the shape, the key order and the padding (the help's line breaks as spaces).
  std::string help;
  for (char c : run("--help").output)
    if (!std::isspace(static_cast<unsigned char>(c)) || (!help.empty() && help.back() != ' '))
      help += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
  CHECK(help.find("--fp8-v-layout") != std::string::npos);
  CHECK(help.find("(B, H_kv, D, N_k rounded up to") != std::string::npos);
  CHECK(help.find("0 1 8 9 2 3 10 11") != std::string::npos);
  CHECK(help.find("padding zero codes") != std::string::npos);
}

TEST_CASE("fa-bench: input is judged before the GPU is asked, and nothing is silently ignored",
          "[tuner][cli]") {
  // Each of these was exit 3 ("no GPU") here, or exit 0 with --compile-space, the value ignored.
  for (char const* args :
       {"--config kBlockM=7", "--config kNoSuch=1", "--mutant FA_MUTANT_NOSUCH", "--fp8-block-rows 33",
        "--csv /nonexistent/x.csv", "--json /tmp", "--samples /nonexistent/x.csv", "stray",
        "--compile-space --config kBlockM=64", "--compile-space --csv x.csv",
        "--compile-space --config kNoSuch=1", "--dtype fp8_e4m3", "--batch 70000", "--seqlen 99999999"}) {
    check_refused(args);
  }
}

TEST_CASE("fa-bench --config kScoreBits=16: naive's precision option, taken though fa-tune never searches it",
          "[tuner][cli]") {
  std::vector<std::string> words = {"fa-bench", "--family", "naive",    "--config", "kScoreBits=16",
                                    "--dtype",  "bf16",     "--causal", "no",       "--head-dim",
                                    "64"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  auto const opt = fl::tuner::parse_bench_options(int(argv.size()), argv.data());
  auto const naive = fl::device::find_family("naive");
  fl::tuner::validate_bench_plan(opt, *naive);  // exits 2 on a refusal
  auto const base = fl::tuner::timed_problem(opt, 1024, 64, false, fl::common::Precision::bf16);
  auto const config = fl::tuner::bench_config(opt, *naive, base);
  CHECK(config.at("kScoreBits") == 16);
  CHECK(config.at("kNWarps") == naive->default_config(base).at("kNWarps"));  // unset: the default's
  CHECK(naive->name_expressions(config, base)[1] == "naive_softmax<__nv_bfloat16, 256, 16>");
  CHECK(naive->score_precision(config, base) == fl::common::Precision::bf16);
  // An unknown key is refused, naming the tunables and the precision options; a bad value by the rule.
  check_refused("--family naive --config kScoreBits=16,kBlockM=64");
  CHECK_THAT(run("--family naive --config kBlockM=64").output,
             Catch::Contains("--config kBlockM is not a tunable of naive (kNWarps, kStages, kSoftmaxThreads) "
                             "nor a precision option (kScoreBits)"));
  check_refused("--family naive --config kScoreBits=8");
  check_refused("--family fa2_sm80 --config kScoreBits=16");
  CHECK_THAT(run("--help").output, Catch::Contains("kScoreBits"));
}

TEST_CASE("fa-bench --stability-study: 16-bit dtypes and a writable path, judged before the GPU",
          "[tuner][cli]") {
  for (char const* args : {"--family fa2_fp8 --dtype fp8_e4m3 --stability-study x.csv",
                           "--stability-study /nonexistent/x.csv", "--compile-space --stability-study x.csv"})
    check_refused(args);
  CHECK(run("--help").output.find("--stability-study") != std::string::npos);
}

TEST_CASE("fa-bench: a problem that cannot fit in the GPU's memory is named with both byte counts",
          "[tuner][cli]") {
  std::vector<std::string> words = {"fa-bench", "--family", "naive",   "--head-dim", "128",
                                    "--seqlen", "65536",    "--batch", "4",          "--heads",
                                    "64",       "--causal", "no"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  auto const opt = fl::tuner::parse_bench_options(int(argv.size()), argv.data());
  auto const naive = fl::device::find_family("naive");
  constexpr std::size_t kH200Bytes = 150'000'000'000;  // about 140 GiB
  // fp32 S and 16-bit P: 4 * 64 * 65536^2 * (4 + 2) bytes = 6.6 TB (when both were fp32, 8.8 TB: the H200
  // run printed nothing for 60 s; killed).
  auto const refused = fl::tuner::device_fit_problem(opt, *naive, kH200Bytes);
  REQUIRE(refused);
  CHECK_THAT(*refused,
             Catch::Contains("needs 6614316744704 bytes") && Catch::Contains("the GPU has 150000000000"));
  // The same family at n = 1024 fits; and a product past 2^60 is refused without wrapping.
  words[6] = "1024";
  argv.clear();
  for (auto& w : words) argv.push_back(w.data());
  CHECK_FALSE(fl::tuner::device_fit_problem(fl::tuner::parse_bench_options(int(argv.size()), argv.data()),
                                            *naive, kH200Bytes));
  words[6] = "16777216";
  words[8] = "65536";
  argv.clear();
  for (auto& w : words) argv.push_back(w.data());
  auto const huge = fl::tuner::device_fit_problem(
      fl::tuner::parse_bench_options(int(argv.size()), argv.data()), *naive, kH200Bytes);
  REQUIRE(huge);
  CHECK_THAT(*huge, Catch::Contains("more than 2^60 bytes"));
}

TEST_CASE("fa-bench: decode shapes, --seqlen-q rows against --seqlen keys, --heads-kv for GQA",
          "[tuner][cli]") {
  std::vector<std::string> words = {
      "fa-bench", "--family", "flash_decode", "--seqlen",   "32768", "--seqlen-q", "4",  "--batch",
      "2",        "--heads",  "32",           "--heads-kv", "8",     "--head-dim", "128"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  auto const opt = fl::tuner::parse_bench_options(int(argv.size()), argv.data());
  auto const p = fl::tuner::timed_problem(opt, 32768, 128, false, fl::common::Precision::bf16);
  CHECK(p.shape.batch == 2);
  CHECK(p.shape.heads_q == 32);
  CHECK(p.shape.heads_kv == 8);
  CHECK(p.shape.seqlen_q == 4);
  CHECK(p.shape.seqlen_k == 32768);
  // The plan is judged on the decode shape (flash_decode refuses n_q = n_k = 32768 as a prefill).
  auto const family = fl::device::find_family("flash_decode");
  fl::tuner::validate_bench_plan(opt, *family);
  check_refused("--family flash_decode --seqlen 32768");
  check_refused("--seqlen-q 0");
  check_refused("--heads 32 --heads-kv 5");
  check_refused("--family fa2_sm80 --heads 32 --heads-kv 64");
}

TEST_CASE("fa-bench: counts name their range, repeats and timing options a mode ignores are refused",
          "[tuner][cli]") {
  // Each was boost's "the argument ('99999999999') for option '--runs' is invalid" (no range), a shape run
  // twice, or exit 0 / 3 with --runs and --warmup unused.
  for (auto const& [args, named] : std::vector<std::pair<std::string, std::string>>{
           {"--runs 99999999999", "--runs 99999999999 is not allowed (20..100000"},
           {"--runs 19", "--runs 19 is not allowed (20..100000; the protocol's minimum is 20)"},
           {"--warmup 99999999", "--warmup 99999999 is not allowed (0..10000)"},
           {"--warmup 1x", "--warmup '1x' is not allowed (a whole number, 0..10000)"},
           {"--settle-ms 10001", "--settle-ms 10001 is not allowed (0..10000)"},
           {"--batch 99999999999 --heads 1", "--batch 99999999999 is not allowed (1..65536)"},
           {"--seqlen-q 99999999999", "--seqlen-q 99999999999 is not allowed (1..16777216)"},
           {"--heads-kv 5x", "--heads-kv '5x' is not allowed (a whole number, 1..65536)"},
           {"--fp8-block-rows 99999999999", "--fp8-block-rows 99999999999 is not allowed (32..16777216"},
           {"--dtype bf16,bf16", "--dtype 'bf16,bf16' names a value twice"},
           {"--head-dim 64,64", "--head-dim '64,64' names a value twice"},
           {"--seqlen 128,128", "--seqlen '128,128' names a value twice"},
           {"--csv ''", "--csv '' is empty"},
           {"--check-only --runs 25", "--runs sets the timed runs; --check-only times nothing"},
           {"--compile-space --warmup 3", "--warmup sets the timed runs; --compile-space times nothing"},
           {"--launch-once --runs 25", "--runs sets the timed runs; --launch-once times nothing"},
           {"--check-only --samples x.csv", "--samples writes the timed runs; --check-only times nothing"},
           {"--error-study e.csv --settle-ms 200",
            "--settle-ms sets the timed runs; --error-study times nothing"}}) {
    check_refused(args);
    CHECK_THAT(run(args).output, Catch::Contains(named));
  }
}
