// Every CPU-applicable mutant is killed by the verifier and named first by the diagnosis, at two tile
// sizes and two precisions (fp16/bf16 for the forward and backward mutants, e4m3/e5m2 for the FP8 ones),
// in both loop orders; the correct variant passes every input of every campaign.
#include <catch2/catch.hpp>

#include "numerics/campaign/campaign_report.hpp"
#include "numerics/campaign/cpu_runner.hpp"
#include "numerics/campaign/mutation_campaign.hpp"
#include "numerics/campaign/verifier_judge.hpp"

namespace {

using namespace fl::numerics;
namespace mut = fl::numerics::mutants;
namespace emu = fl::numerics::emulator;

// Small enough for seconds on one core, large enough for several key blocks at every tile tested.
fl::common::AttentionShape campaign_shape() {
  fl::common::AttentionShape s;
  s.heads_q = 2;
  s.heads_kv = 1;
  s.seqlen_q = s.seqlen_k = 72;
  s.head_dim = 16;
  return s;
}

std::vector<mut::MutantId> mutants_of(bool fp8) {
  std::vector<mut::MutantId> out;
  for (auto const& m : mut::kCatalogue)
    if (mut::cpu_applicable(m.id) && (m.kind == mut::MutantKind::fp8) == fp8) out.push_back(m.id);
  return out;
}

void check_campaign(emu::LoopOrder order, emu::TileConfig tiles,
                    std::vector<fl::common::Precision> precisions, bool fp8) {
  mut::CpuMutantRunner runner(order, tiles, 1);
  mut::CampaignOptions options;
  options.precisions = std::move(precisions);
  options.mutants = mutants_of(fp8);
  options.shape = campaign_shape();
  options.diagnosis.threads = 1;
  mut::CampaignResult const result = mut::run_campaign(runner, mut::verifier_judge(1), options);
  INFO(mut::campaign_table(result));
  CHECK(result.baseline_clean());
  CHECK(result.count(mut::MutantStatus::survived) == 0);
  CHECK(result.count(mut::MutantStatus::killed) == options.mutants.size() * options.precisions.size());
  CHECK(result.misnamed() == 0);
  CHECK(result.score() == 100.0);
}

}  // namespace

TEST_CASE("forward and backward mutants killed and named: FA-2, kBlockM 64, kBlockN 32, fp16 and bf16",
          "[mutants][campaign]") {
  check_campaign(emu::LoopOrder::fa2, {64, 32}, {fl::common::Precision::fp16, fl::common::Precision::bf16},
                 false);
}

TEST_CASE("forward and backward mutants killed and named: FA-2, kBlockM 16, kBlockN 64, fp16 and bf16",
          "[mutants][campaign]") {
  check_campaign(emu::LoopOrder::fa2, {16, 64}, {fl::common::Precision::fp16, fl::common::Precision::bf16},
                 false);
}

TEST_CASE("forward and backward mutants killed and named: FA-1, kBlockM 32, kBlockN 16, bf16",
          "[mutants][campaign]") {
  check_campaign(emu::LoopOrder::fa1, {32, 16}, {fl::common::Precision::bf16}, false);
}

TEST_CASE("FP8 mutants killed and named at two tile sizes in e4m3 and e5m2", "[mutants][campaign]") {
  check_campaign(emu::LoopOrder::fa2, {64, 32},
                 {fl::common::Precision::fp8_e4m3, fl::common::Precision::fp8_e5m2}, true);
  check_campaign(emu::LoopOrder::fa2, {16, 64},
                 {fl::common::Precision::fp8_e4m3, fl::common::Precision::fp8_e5m2}, true);
}

TEST_CASE("the GPU-only mutant is listed as not applicable on the CPU, with its reason", "[mutants]") {
  mut::CpuMutantRunner runner(emu::LoopOrder::fa2, {64, 64});
  auto const why = runner.not_applicable(mut::MutantId::bwd_race, fl::common::Precision::bf16);
  REQUIRE(why);
  CHECK(why->find("GPU only") != std::string::npos);
  CHECK_FALSE(runner.not_applicable(mut::MutantId::unrescaled_o, fl::common::Precision::bf16));
  CHECK(runner.not_applicable(mut::MutantId::fp8_p_overflow, fl::common::Precision::bf16));
  CHECK_FALSE(runner.not_applicable(mut::MutantId::fp8_p_overflow, fl::common::Precision::fp8_e4m3));
}
