// The campaign's race detection with a fake target whose racy mutant differs only on some reruns: found on
// the stress problem first when one is asked for, else on the inputs; a target whose reruns always agree
// leaves the race a survivor, unless its race tool (racecheck on the GPU) reports it, asked only then.
// No verifier is needed: the fake's outputs always pass the judge.
#include "numerics/campaign/mutation_campaign.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mut = fl::numerics::mutants;
using fl::common::Precision;
using fl::numerics::AttentionInputs;
using fl::numerics::AttentionOutputs;

namespace {

// bwd-race's runs differ from the first from the `differ_from_run`-th call on inputs of `racy_seqlen`.
class RacyTarget final : public mut::MutantRunner {
 public:
  RacyTarget(int racy_seqlen, int differ_from_run)
      : racy_seqlen_(racy_seqlen), differ_from_(differ_from_run) {}
  std::string_view target() const override { return "fake"; }
  std::string family() const override { return "racy"; }
  std::optional<std::string> not_applicable(mut::MutantId id, Precision) const override {
    if (id == mut::MutantId::bwd_race) return std::nullopt;
    return std::string("only bwd-race runs here");
  }
  AttentionOutputs run(std::optional<mut::MutantId> mutant, AttentionInputs const& inputs,
                       Precision) override {
    AttentionOutputs out;
    out.o.assign(1, 1.0);
    bool const racy = mutant == mut::MutantId::bwd_race && inputs.shape.seqlen_q == racy_seqlen_;
    if (racy && ++calls_ >= differ_from_) out.o[0] = 2.0;
    return out;
  }
  int repeats(mut::MutantId id) const override { return id == mut::MutantId::bwd_race ? 4 : 1; }
  std::optional<mut::RaceToolReport> race_tool_check(mut::MutantId, Precision, std::uint64_t seed) override {
    ++race_tool_calls;
    race_tool_seed = seed;
    return race_tool;
  }
  std::optional<mut::RaceToolReport> race_tool;  // nullopt: no race tool (the CPU)
  int race_tool_calls = 0;
  std::uint64_t race_tool_seed = 0;
  bool has_backward(Precision) const override { return true; }
  std::string config_json(std::optional<mut::MutantId>, fl::common::AttentionShape const&,
                          Precision) const override {
    return "{}";
  }

 private:
  int racy_seqlen_, differ_from_, calls_ = 0;
};

mut::CampaignResult race_campaign(RacyTarget& target, int race_seqlen) {
  mut::CampaignOptions options;
  options.precisions = {Precision::bf16};
  options.mutants = {mut::MutantId::bwd_race};
  options.families = {fl::numerics::InputFamily::normal};
  options.causal = {false};
  options.shape = {1, 1, 1, 40, 40, 16, false, 0.0};
  options.race_seqlen = race_seqlen;
  auto const always_pass = [](AttentionInputs const&, Precision) {
    return mut::PreparedJudge([](AttentionOutputs const&) { return mut::Verdict{}; });
  };
  return mut::run_campaign(target, always_pass, options);
}

}  // namespace

TEST_CASE("a race that shows only on the stress problem is killed there and named", "[mutants]") {
  RacyTarget target(/*racy_seqlen=*/256, /*differ_from_run=*/3);
  auto const result = race_campaign(target, 256);
  REQUIRE(result.outcomes.size() == 1);
  auto const& o = result.outcomes.front();
  CHECK(o.status == mut::MutantStatus::killed);
  CHECK(o.named_correctly);
  CHECK(o.verdict.find("stress problem n = 256") != std::string::npos);
  CHECK(o.evidence == "run 3 differs from run 1");
}

TEST_CASE("without a stress problem the same race survives inputs where it never shows", "[mutants]") {
  RacyTarget target(256, 3);
  auto const result = race_campaign(target, 0);
  REQUIRE(result.outcomes.size() == 1);
  CHECK(result.outcomes.front().status == mut::MutantStatus::survived);
}

TEST_CASE("a race that shows on the campaign's own inputs is killed there", "[mutants]") {
  RacyTarget target(/*racy_seqlen=*/40, /*differ_from_run=*/2);
  target.race_tool = mut::RaceToolReport{true, "racecheck: 1 hazard", ""};
  auto const result = race_campaign(target, 0);
  REQUIRE(result.outcomes.size() == 1);
  auto const& o = result.outcomes.front();
  CHECK(o.status == mut::MutantStatus::killed);
  CHECK(o.verdict == "repeated runs disagree bit for bit");
  CHECK(o.killed_by->describe() == "normal, non-causal, seed 1");
  CHECK(target.race_tool_calls == 0);  // the slow tool only where reruns found nothing
}

TEST_CASE("a race no rerun shows is killed by the race tool's hazards and named", "[mutants]") {
  RacyTarget target(/*racy_seqlen=*/256, /*differ_from_run=*/2);  // never racy on these inputs
  target.race_tool = mut::RaceToolReport{
      true, "racecheck: 11 hazards (11 errors, 0 warnings) on b1 h2 n300 (correct kernel: 0 hazards)",
      "RACECHECK SUMMARY: 11 hazards displayed (11 errors, 0 warnings)"};
  auto const result = race_campaign(target, 128);
  REQUIRE(result.outcomes.size() == 1);
  auto const& o = result.outcomes.front();
  CHECK(o.status == mut::MutantStatus::killed);
  CHECK(o.named_correctly);
  CHECK(o.diagnosis == std::vector<std::string>{"bwd-race"});
  CHECK(o.verdict.rfind("racecheck: 11 hazards", 0) == 0);
  CHECK(o.evidence.rfind("RACECHECK SUMMARY: 11", 0) == 0);
  CHECK(target.race_tool_calls == 1);
  CHECK(target.race_tool_seed == 1);
  CHECK(result.ok());
}

TEST_CASE("a race the tool cannot show survives with the tool's reason, never silently", "[mutants]") {
  RacyTarget target(256, 2);
  target.race_tool =
      mut::RaceToolReport{false, "no compute-sanitizer on PATH: races were only tested by reruns", ""};
  auto const result = race_campaign(target, 0);
  REQUIRE(result.outcomes.size() == 1);
  auto const& o = result.outcomes.front();
  CHECK(o.status == mut::MutantStatus::survived);
  CHECK(o.reason == "no compute-sanitizer on PATH: races were only tested by reruns");
  CHECK(result.score() == Approx(0.0));
}

TEST_CASE("campaign_shape raises N until every family's shape holds two key blocks and a tail",
          "[mutants][campaign]") {
  fl::common::AttentionShape base;
  base.seqlen_q = base.seqlen_k = 100;
  base.head_dim = 16;
  std::span<fl::numerics::InputFamily const> const families = fl::numerics::all_input_families();
  CHECK(mut::campaign_shape(base, {}, families).seqlen_q == 100);  // no requirement: the shape as given
  CHECK(mut::campaign_shape(base, {16, 32}, families).seqlen_q == 100);
  fl::common::AttentionShape const raised = mut::campaign_shape(base, {128, 128}, families);
  CHECK(raised.seqlen_q > 100);
  for (fl::numerics::InputFamily family : families) {
    fl::common::AttentionShape const s = fl::numerics::family_shape(family, raised);
    CHECK(s.seqlen_k >= 2 * 128 + 1);
    CHECK(s.seqlen_q >= 2 * 128 + 1);
  }
  // The smallest such N: one less fails for some family (fully_masked_rows loses a quarter of its keys).
  fl::common::AttentionShape smaller = raised;
  --smaller.seqlen_q;
  --smaller.seqlen_k;
  bool some_family_short = false;
  for (fl::numerics::InputFamily family : families)
    some_family_short = some_family_short ||
                        fl::numerics::family_shape(family, smaller).seqlen_k < 2 * 128 + 1 ||
                        fl::numerics::family_shape(family, smaller).seqlen_q < 2 * 128 + 1;
  CHECK(some_family_short);
}
