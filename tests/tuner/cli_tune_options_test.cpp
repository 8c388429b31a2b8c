#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tuner/cli/tune_options.hpp"
#include "tuner/tune/compile_only.hpp"

using namespace fl::device;
using namespace fl::tuner;

namespace {
TuneOptions parse(std::vector<char const*> args) {
  args.insert(args.begin(), "fa-tune");
  return parse_tune_options(static_cast<int>(args.size()), args.data());
}
}  // namespace

TEST_CASE("fa-tune options: defaults and lists", "[tuner][cli]") {
  auto o = parse({"--arch", "sm90", "--head-dim", "64,128", "--dtype", "fp16,bf16", "--causal", "yes"});
  CHECK(o.arch == "sm90");
  CHECK(o.head_dims == std::vector<int>{64, 128});
  CHECK(o.dtypes == std::vector<std::string>{"fp16", "bf16"});
  CHECK(o.causal == CausalChoice::yes);
  CHECK_FALSE(o.compile_only);
  CHECK(parse({"--compile-only"}).compile_only);
  CHECK(parse({"--help"}).help);
  CHECK(parse({"--help"}).help_text.find("--compile-only") != std::string::npos);
}

TEST_CASE("fa-tune options: every bad value is one clear UsageError", "[tuner][cli]") {
  CHECK_THROWS_WITH(parse({"--arch", "sm75"}), Catch::Contains("--arch 'sm75' is not one of"));
  CHECK_THROWS_WITH(parse({"--seqlen", "-4"}), Catch::Contains("--seqlen -4 is outside"));
  CHECK_THROWS_WITH(parse({"--seqlen", "12x"}), Catch::Contains("not a whole number"));
  CHECK_THROWS_WITH(parse({"--head-dim", "96"}), Catch::Contains("--head-dim 96"));
  CHECK_THROWS_WITH(parse({"--dtype", "fp4"}), Catch::Contains("--dtype 'fp4'"));
  CHECK_THROWS_WITH(parse({"--batch", "2"}), Catch::Contains("--batch and --heads go together"));
  CHECK_THROWS_WITH(parse({"--budget", "0"}), Catch::Contains("must be positive"));
  CHECK_THROWS_AS(parse({"--no-such-option"}), UsageError);
  CHECK_THROWS_AS(parse({"--jobs", "-1"}), UsageError);
}

TEST_CASE("fa-tune options: noise runs, warm start and the measurement export", "[tuner][cli]") {
  auto const o = parse({"--noise-runs", "2", "--warm-start", "--export-measurements", "m.tsv"});
  CHECK(o.noise_runs == 2);
  CHECK(o.warm_start);
  CHECK(o.export_measurements_path == "m.tsv");
  CHECK(parse({}).noise_runs == 1);
  CHECK_FALSE(parse({}).warm_start);
  CHECK_THROWS_WITH(parse({"--noise-runs", "0"}), Catch::Contains("--noise-runs 0 is outside 1..10"));
  CHECK_THROWS_WITH(parse({"--noise-runs", "11"}), Catch::Contains("--noise-runs 11 is outside"));
}

TEST_CASE("fa-tune options: counts are checked against common/input_limits.hpp", "[tuner][cli]") {
  CHECK_THROWS_WITH(parse({"--jobs", "99999"}), Catch::Contains("--jobs 99999 is not allowed (0..256"));
  CHECK_THROWS_WITH(parse({"--seed", "-1"}), Catch::Contains("--seed -1 is not allowed"));
  CHECK_THROWS_WITH(parse({"--seed", "1e3"}), Catch::Contains("--seed '1e3'"));
  CHECK_THROWS_WITH(parse({"stray"}), Catch::Contains("unexpected argument 'stray'"));
  CHECK_THROWS_WITH(parse({"--tokens", "99999999999"}), Catch::Contains("--tokens 99999999999"));
  CHECK_THROWS_WITH(parse({"--batch", "2", "--heads", "70000"}), Catch::Contains("--heads 70000"));
  CHECK(parse({"--seed", "9223372036854775807"}).seed == 9223372036854775807ULL);
  CHECK(parse({"--jobs", "256"}).jobs == 256);
}

TEST_CASE("fa-tune options: --pace is fast (default) or baseline, and --help says what each does",
          "[tuner][cli]") {
  CHECK(parse({}).pace == "fast");
  CHECK(parse({"--pace", "baseline"}).pace == "baseline");
  CHECK_THROWS_WITH(parse({"--pace", "slow"}),
                    Catch::Contains("--pace 'slow' is not one of: baseline, fast"));
  auto const help = parse({"--help"}).help_text;
  CHECK(help.find("--pace") != std::string::npos);
  CHECK(help.find("probe runs") != std::string::npos);
}

TEST_CASE("fa-tune --help names the precision options it never searches (naive's kScoreBits)",
          "[tuner][cli]") {
  auto const help = parse({"--help"}).help_text;
  CHECK_THAT(help, Catch::Contains("Precision options are claims judged by their own bound, not tunables") &&
                       Catch::Contains("naive's kScoreBits: 32 (the default) or 16"));
}

TEST_CASE("fa-tune options: --gpus names GPUs or all, once each, and what it cannot be combined with",
          "[tuner][cli]") {
  CHECK(parse({"--gpus", "0,2"}).gpus == std::vector<int>{0, 2});
  CHECK(parse({"--gpus", "all"}).all_gpus);
  CHECK(parse({}).gpus.empty());
  CHECK_FALSE(parse({}).worker_gpu);
  auto const worker = parse({"--gpu-worker", "3", "--shard", "2/4"});
  CHECK(*worker.worker_gpu == 3);
  CHECK(*worker.shard == std::pair{2, 4});
  CHECK_THROWS_WITH(parse({"--gpus", "1,1"}), Catch::Contains("--gpus 1,1 names GPU 1 twice"));
  CHECK_THROWS_WITH(parse({"--gpus", "-1"}), Catch::Contains("--gpus -1 is outside 0..63"));
  CHECK_THROWS_WITH(parse({"--gpus", "0", "--compile-only"}),
                    Catch::Contains("--compile-only measures nothing"));
  CHECK_THROWS_WITH(parse({"--gpus", "0", "--noise-runs", "2"}),
                    Catch::Contains("run a noise series on one GPU"));
  CHECK_THROWS_WITH(parse({"--shard", "3/2"}), Catch::Contains("--shard '3/2' is not K/N"));
  CHECK_THROWS_WITH(parse({"--shard", "1/2x"}), Catch::Contains("--shard '1/2x'"));
  auto const help = parse({"--help"}).help_text;
  CHECK(help.find("--gpus") != std::string::npos);
  CHECK(help.find("--gpu-worker") == std::string::npos);  // written by the coordinator, not for users
}

TEST_CASE("fa-tune options: the FP8 recipe (scaling, block rows, rotation, where it is quantised)",
          "[tuner][cli][fp8]") {
  auto const defaults = parse({"--dtype", "fp8_e4m3"});
  CHECK(defaults.fp8.scaling == fl::common::Fp8Scaling::per_tensor);
  CHECK_FALSE(defaults.fp8.incoherent);
  CHECK_FALSE(defaults.fp8.on_device);
  auto const o = parse({"--dtype", "fp8_e4m3", "--fp8-scaling", "per_block", "--fp8-block-rows", "128",
                        "--incoherent", "--fp8-quantize", "device"});
  CHECK(o.fp8.scaling == fl::common::Fp8Scaling::per_block);
  CHECK(o.fp8.block_rows == 128);
  CHECK(o.fp8.incoherent);
  CHECK(o.fp8.on_device);
  CHECK_THROWS_WITH(parse({"--fp8-scaling", "per_row"}), Catch::Contains("--fp8-scaling 'per_row'"));
  CHECK_THROWS_WITH(parse({"--fp8-block-rows", "33"}), Catch::Contains("--fp8-block-rows 33"));
  CHECK_THROWS_WITH(parse({"--fp8-quantize", "gpu"}), Catch::Contains("--fp8-quantize 'gpu'"));
  CHECK_FALSE(defaults.fp8.bf16_pv);
  CHECK(parse({"--dtype", "fp8_e4m3", "--fp8-pv", "bf16"}).fp8.bf16_pv);
  CHECK_THROWS_WITH(parse({"--fp8-pv", "fp16"}), Catch::Contains("--fp8-pv 'fp16' is not one of fp8, bf16"));
  CHECK_FALSE(defaults.fp8.pretransposed_v);
  CHECK(parse({"--dtype", "fp8_e4m3", "--fp8-v-layout", "transposed"}).fp8.pretransposed_v);
  CHECK_THROWS_WITH(parse({"--dtype", "fp8_e4m3", "--fp8-v-layout", "cols"}),
                    Catch::Contains("--fp8-v-layout 'cols' is not one of rows, transposed"));
  CHECK_THROWS_WITH(parse({"--dtype", "fp8_e4m3,bf16", "--fp8-v-layout", "transposed"}),
                    Catch::Contains("--dtype bf16 takes row-major V"));
  CHECK_THROWS_WITH(parse({"--dtype", "fp8_e4m3", "--fp8-v-layout", "transposed", "--fp8-pv", "bf16"}),
                    Catch::Contains("--fp8-pv bf16 reads row-major"));
  CHECK(parse({"--help"}).help_text.find("--fp8-quantize") != std::string::npos);
  // Every FP8 problem fa-tune compiles and tunes carries the recipe (and so its database key).
  auto const mixed = parse({"--dtype", "bf16,fp8_e4m3", "--incoherent", "--causal", "no"});
  auto const problems = selected_problem_classes(mixed);
  REQUIRE(problems.size() == 2);
  CHECK(dtype_key(problems[0]) == "bf16");
  CHECK(dtype_key(problems[1]) == "fp8_e4m3 incoherent");
}

TEST_CASE("fa-tune options: a number beyond int, trailing junk, a repeat or an empty value names the option",
          "[tuner][cli]") {
  // Each of the first was "the argument ('99999999999') for option '--budget' is invalid", no range given.
  CHECK_THROWS_WITH(parse({"--budget", "99999999999"}),
                    Catch::Contains("--budget 99999999999 is outside 1..1000000"));
  CHECK_THROWS_WITH(parse({"--budget", "5x"}),
                    Catch::Contains("--budget '5x' is not a whole number (1..1000000)"));
  CHECK_THROWS_WITH(parse({"--noise-runs", "99999999999"}),
                    Catch::Contains("--noise-runs 99999999999 is outside 1..10"));
  CHECK_THROWS_WITH(parse({"--batch", "99999999999", "--heads", "1"}),
                    Catch::Contains("--batch 99999999999 is not allowed (1..65536)"));
  CHECK_THROWS_WITH(parse({"--batch", "12abc", "--heads", "1"}),
                    Catch::Contains("--batch '12abc' is not allowed (a whole number, 1..65536)"));
  CHECK_THROWS_WITH(parse({"--jobs", "1x"}),
                    Catch::Contains("--jobs '1x' is not allowed (a whole number, 0..256"));
  CHECK_THROWS_WITH(parse({"--gpu-worker", "99999999999"}),
                    Catch::Contains("--gpu-worker 99999999999 is outside 0..63"));
  CHECK_THROWS_WITH(parse({"--seqlen", "99999999999"}),
                    Catch::Contains("--seqlen 99999999999 is outside 1..16777216"));
  // --time-limit inf was taken, and 1e10 overflowed the deadline (nanoseconds of steady_clock): the run
  // stopped at once.
  for (char const* bad : {"inf", "1e10", "5s", "0", "nan"})
    CHECK_THROWS_WITH(parse({"--time-limit", bad}),
                      Catch::Contains(std::string("--time-limit '") + bad +
                                      "' is not allowed (a positive finite number up to 2592000)"));
  CHECK(*parse({"--time-limit", "2592000"}).time_limit_s == 2592000.0);
  // A value named twice was tuned twice (--family naive --family naive compiled every config twice).
  CHECK_THROWS_WITH(parse({"--family", "naive", "--family", "naive"}),
                    Catch::Contains("--family names naive twice"));
  CHECK_THROWS_WITH(parse({"--dtype", "bf16,bf16"}), Catch::Contains("--dtype names bf16 twice"));
  CHECK_THROWS_WITH(parse({"--head-dim", "64,64"}), Catch::Contains("--head-dim names 64 twice"));
  CHECK_THROWS_WITH(parse({"--seqlen", "128,128"}), Catch::Contains("--seqlen names 128 twice"));
  // An empty value read as "not given": --db '' tuned into the default database, --replay '' and
  // --merge '' ran without what they name and exited 0.
  for (char const* option :
       {"--db", "--replay", "--merge", "--json", "--report", "--family", "--kernels-dir"})
    CHECK_THROWS_WITH(parse({option, ""}), Catch::Contains(std::string(option) + " '' is empty"));
}

TEST_CASE("fa-tune options: --measured-on picks a GPU's rows for the answers without a GPU, and only there",
          "[tuner][cli]") {
  CHECK(parse({"--measured-on", "H100"}).measured_on == "H100");
  CHECK(parse({}).measured_on.empty());
  CHECK(parse({"--help"}).help_text.find("--measured-on") != std::string::npos);
  CHECK_THROWS_WITH(parse({"--measured-on", ""}), Catch::Contains("--measured-on '' is empty"));
  for (std::vector<char const*> const& other : {std::vector<char const*>{"--compile-only"},
                                                {"--replay", "r.tsv"},
                                                {"--merge", "m.sqlite"},
                                                {"--gpus", "0"}}) {
    auto args = other;
    args.insert(args.end(), {"--measured-on", "H100"});
    CHECK_THROWS_WITH(parse(args), Catch::Contains("--measured-on chooses the rows a machine without a GPU"));
  }
}
