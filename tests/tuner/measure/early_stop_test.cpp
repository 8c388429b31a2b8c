// The early stop of timing (tuner/measure/early_stop.hpp): the rule, and the rule replayed on the recorded
// H200 run, where it must cut only configs that cannot win and leave the winner as the full protocol found
// it.
#include <catch2/catch.hpp>

#include <filesystem>

#include "runtime/kernel_source.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/measure/early_stop.hpp"
#include "tuner/tune/gpu_evaluator.hpp"
#include "tuner/tune/replay_backend.hpp"
#include "tuner/tune/tune_command.hpp"

using namespace fl;
using namespace fl::tuner;

TEST_CASE("a candidate stops after the probe only when even its fastest run cannot win", "[tuner][measure]") {
  CHECK_FALSE(cut_threshold_ms(std::nullopt));  // nothing timed yet: every candidate gets the full protocol
  CHECK(*cut_threshold_ms(2.0) == Approx(2.0 * kClearlySlower));
  auto const threshold = cut_threshold_ms(2.0);  // 2.5 ms
  std::vector<double> slow(kProbeRuns, 2.6);
  CHECK(cut_after_probe(slow, threshold));
  CHECK_FALSE(cut_after_probe(slow, std::nullopt));
  auto one_fast = slow;
  one_fast[3] = 2.4;  // one run under the threshold: it might still be close, so it is timed in full
  CHECK_FALSE(cut_after_probe(one_fast, threshold));
  CHECK_FALSE(cut_after_probe(std::vector<double>(kProbeRuns - 1, 9.0), threshold));  // the probe is not over
  CHECK_FALSE(cut_after_probe(std::vector<double>(kProbeRuns, 2.5), threshold));  // at the threshold: kept
}

TEST_CASE("replayed on the recorded H200 run, the early stop cuts 73 of 126 and keeps the winner",
          "[tuner][measure]") {
  auto const fixture = std::filesystem::path(FA_TEST_DATA_DIR) / "fa2_sm80_h200_bf16_d128_n4096_full.tsv";
  if (!std::filesystem::exists(fixture)) {
    WARN("skipped: " << fixture << " is not committed");
    return;
  }
  test::TempKernelsDir dir;
  auto const kernels = runtime::resolve_kernels_dir(std::nullopt).value();
  auto run = [&](char const* pace) {
    char const* argv[] = {"fa-tune", "--seqlen", "4096", "--causal", "no", "--pace", pace};
    auto const options = parse_tune_options(7, argv);
    ReplayBackend replay(fixture, pace_named(pace)->cut_clearly_slower);
    return run_tuning(options, replay, kernels, dir.path() / (std::string(pace) + ".sqlite"));
  };
  auto const fast = run("fast");
  auto const full = run("baseline");
  REQUIRE(fast.rows.size() == 1);
  REQUIRE(full.rows.size() == 1);
  CHECK(full.rows[0].timing_cut == 0);
  CHECK(fast.rows[0].timing_cut == 73);
  CHECK(fast.rows[0].best_config == full.rows[0].best_config);
  CHECK(fast.rows[0].best_ms == full.rows[0].best_ms);
  // Every cut candidate is recorded with the probe's runs, and none was within kClearlySlower of the winner.
  int cut = 0;
  for (auto const& [config, row] : fast.rows[0].candidates) {
    if (row.verdict != "ok" || row.runs != kProbeRuns) continue;
    ++cut;
    CHECK(*row.median_ms > fast.rows[0].best_ms * kClearlySlower);
  }
  CHECK(cut == 73);
}
