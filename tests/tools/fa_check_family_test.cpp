// fa-check --family from the command line: every wrong choice is one line and exit 2 on any machine (judged
// before the GPU is looked for); without a GPU the run is exit 3 in one line; with one, our kernel passes
// and the same kernel compiled with a catalogued bug fails.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/exit_codes.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/tool_process.hpp"

namespace fs = std::filesystem;

namespace {

fl::test::ToolOutcome fa_check(std::string const& args) {
  return fl::test::run_tool(fl::test::sibling_binary("fa-check").string() + " " + args);
}

}  // namespace

TEST_CASE("fa-check --family refuses each wrong choice in one line with exit 2, GPU or not",
          "[numerics][cli]") {
  std::string const ok = "--family fa2_sm80 --dtype bf16 ";
  std::vector<std::pair<std::string, std::string>> const cases = {
      {"--family fa9 --dtype bf16", "--family fa9 is not allowed ("},
      {"--family fa2_sm80 --dtype fp8_e4m3", "fa2_sm80 runs fp16 and bf16"},
      {ok + "--config kBlockM=7", "breaks a rule of fa2_sm80"},
      {ok + "--config nonsense", "--config nonsense is not a config"},
      // A key the family does not declare was taken silently when the rest of the config was whole.
      {"--family naive --dtype bf16 --config "
       "kNWarps=8,kStages=2,kScoreBits=16,kSoftmaxThreads=256,kBlockM=64",
       "--config kBlockM is not a tunable of naive (kNWarps, kStages, kSoftmaxThreads) nor a precision "
       "option "
       "(kScoreBits)"},
      {ok + "--mutant no-such-bug", "--mutant no-such-bug is not allowed ("},
      {ok + "--inputs no-such-family", "--inputs no-such-family is not allowed ("},
      {ok + "--seqlen 0", "--seqlen"},
      {ok + "--heads 3 --heads-kv 2", "--heads 3 is not a multiple of --heads-kv 2"},
      {ok + "--causal --causal-align top-left", "bottom-right only"},
      {ok + "--q q.npy", "--q is for outputs from files"},
      {"--family fa2_sm80", "--dtype is required"},
  };
  for (auto const& [args, expected] : cases) {
    auto const outcome = fa_check(args);
    INFO(args << "\n" << outcome.err);
    CHECK(outcome.exit_code == fl::common::kExitBadInput);
    CHECK(outcome.error_lines() == 1);
    CHECK(outcome.err.find(expected) != std::string::npos);
  }
  // The refusal of an unknown family lists the registry's families.
  CHECK(fa_check("--family fa9 --dtype bf16").err.find("fa3_sm90") != std::string::npos);
}

TEST_CASE("fa-check --family exits 3 in one line without a GPU and passes our kernel with one",
          "[numerics][cli]") {
  auto const outcome = fa_check("--family fa2_sm80 --dtype bf16 --seqlen 130 --seqlen-k 200 --causal");
  INFO(outcome.out << outcome.err);
  if (auto const no_gpu = fl::test::gpu_unavailable_reason()) {
    CHECK(outcome.exit_code == fl::common::kExitNoGpu);
    CHECK(outcome.error_lines() == 1);
    CHECK(outcome.err.rfind("fa-check: no CUDA", 0) == 0);
    CHECK(outcome.out.empty());  // nothing judged, nothing half-printed
  } else {
    CHECK(outcome.exit_code == fl::common::kExitOk);
    CHECK(outcome.out.find("kernel: fa2_sm80 ") != std::string::npos);
  }
}

TEST_CASE("fa-check --family naive takes the precision option kScoreBits=16 (no GPU: exit 3, not 2)",
          "[numerics][cli]") {
  if (!fl::test::gpu_unavailable_reason()) return;  // with a GPU it runs: naive_gpu_test judges 16-bit S
  auto const outcome =
      fa_check("--family naive --dtype bf16 --config kNWarps=8,kStages=2,kScoreBits=16,kSoftmaxThreads=256");
  INFO(outcome.err);
  CHECK(outcome.exit_code == fl::common::kExitNoGpu);
  CHECK(outcome.err.rfind("fa-check: no CUDA", 0) == 0);
}

TEST_CASE("fa-check --family judges our forward and backward kernels on the GPU", "[gpu][numerics][cli]") {
  auto const json =
      fs::temp_directory_path() / ("fl_fa_check_family_" + std::to_string(::getpid()) + ".json");
  for (std::string const family : {"fa2_sm80 --dtype bf16", "fa2_sm80 --dtype fp16 --head-dim 128",
                                   "fa2_sm80_bwd --dtype bf16 --seqlen 200", "fa1 --dtype fp16"}) {
    auto const outcome = fa_check("--family " + family + " --json " + json.string());
    INFO(family << "\n" << outcome.out << outcome.err);
    CHECK(outcome.exit_code == fl::common::kExitOk);
    CHECK(outcome.out.find("fa-check: PASS") != std::string::npos);
    CHECK(fl::test::read_text(json).find("\"verdict\":\"pass\"") != std::string::npos);
  }
  fs::remove(json);
}

TEST_CASE("fa-check --family fails our kernel compiled with a catalogued bug", "[gpu][numerics][cli]") {
  // unrescaled-o: O is not rescaled when the running max moves, so every row whose max moves between key
  // blocks is wrong; over 512 keys of N(0, 1) inputs (the normal family) it moves in most rows.
  auto const outcome = fa_check("--family fa2_sm80 --dtype bf16 --seqlen 512 --mutant unrescaled-o");
  INFO(outcome.out << outcome.err);
  CHECK(outcome.exit_code == fl::common::kExitCheckFailed);
  CHECK(outcome.out.find("-DFA_MUTANT_UNRESCALED_O") != std::string::npos);
  CHECK(outcome.out.find("fa-check: FAIL") != std::string::npos);
}
