// The GPU target of fa-mutate without a GPU: which mutants apply to fa2_sm80 and why the others do not,
// that each mutant's NVRTC request carries exactly its own -D switch, and that a few compile for sm_90a
// (a few, not all: one fa2_sm80 program takes seconds of NVRTC on CI's two cores). With a GPU ([gpu]):
// the whole campaign on fa2_sm80 in bf16 scores 100% with every kill named and no false positive (bwd-race
// by compute-sanitizer's racecheck where reruns agree: compute-sanitizer on PATH, fa-mutate beside this
// binary as its probe).
#include <algorithm>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "numerics/campaign/mutation_campaign.hpp"
#include "numerics/campaign/verifier_judge.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_source.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tools/fa_mutate/gpu_mutant_runner.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tools::fa_mutate;
namespace mut = fl::numerics::mutants;
using common::Precision;

namespace {

std::filesystem::path const kKernelsDir = std::filesystem::path(FA_SOURCE_DIR) / "kernels_src";

std::unique_ptr<GpuMutantRunner> fa2_runner(std::filesystem::path const& kernels_dir = kKernelsDir) {
  auto runner = GpuMutantRunner::create({"fa2_sm80", kernels_dir, runtime::TargetArch::sm_90a, {}, 64, 32});
  REQUIRE(runner);
  return std::move(runner.value());
}

Problem small_problem(bool causal) {
  Problem p;
  p.shape = {1, 2, 1, 100, 100, 64, causal, 0.0};
  p.dtype = Precision::bf16;
  return p;
}

std::string slurp(std::filesystem::path const& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("fa2_sm80 on the GPU: forward and backward mutants apply, fp8 ones and bwd-p-without-l say why not",
          "[tuner][mutants]") {
  auto const runner = fa2_runner();
  CHECK(runner->target() == "gpu");
  CHECK(runner->family() == "fa2_sm80");
  CHECK(runner->has_backward(Precision::bf16));  // fa2_sm80_bwd is registered and runs bf16 at d64
  for (auto const& m : mut::kCatalogue) {
    INFO(m.name);
    auto const why = runner->not_applicable(m.id, Precision::bf16);
    switch (m.kind) {
      case mut::MutantKind::fwd:
        CHECK_FALSE(why);  // every forward switch is in fa2_sm80_fwd.cu or its headers
        break;
      case mut::MutantKind::fp8:
        REQUIRE(why);
        CHECK(why->find("no FP8 path") != std::string::npos);
        break;
      case mut::MutantKind::bwd:
      case mut::MutantKind::gpu_only:
        if (m.id == mut::MutantId::bwd_p_without_l) {
          REQUIRE(why);  // no family stores l apart from m: the argument is printed
          CHECK(why->find("stores only LSE") != std::string::npos);
        } else {
          CHECK_FALSE(why);  // the switches of fa2_sm80_bwd.cu and fa_backward.cuh
        }
        break;
    }
  }
  CHECK(runner->repeats(mut::MutantId::bwd_race) > 1);
  CHECK(runner->repeats(mut::MutantId::unrescaled_o) == 1);
  CHECK(runner->unsupported_precision(Precision::fp8_e4m3));
  CHECK_FALSE(runner->unsupported_precision(Precision::bf16));
}

TEST_CASE("a backward mutant compiles the backward family at its reproducible config", "[tuner][mutants]") {
  auto const runner = fa2_runner();
  Problem backward = small_problem(false);
  backward.direction = Direction::backward;
  CHECK_FALSE(runner->config_violation(backward));
  auto const request = runner->compile_request(mut::MutantId::bwd_missing_delta, backward);
  REQUIRE(request);
  CHECK(request->defines.count("FA_MUTANT_BWD_MISSING_DELTA") == 1);
  REQUIRE_FALSE(request->name_expressions.empty());
  // The reproducible config (the deterministic dQ pass): bwd-race is caught by reruns compared bit for bit.
  CHECK(std::any_of(request->name_expressions.begin(), request->name_expressions.end(),
                    [](std::string const& e) { return e.rfind("fa2_sm80_bwd", 0) == 0; }));
  CHECK(std::none_of(request->name_expressions.begin(), request->name_expressions.end(),
                     [](std::string const& e) { return e.find("dq_convert") != std::string::npos; }));
  // The forward tiles fa-mutate asks for (64 x 32) do not leak into the backward's config.
  std::string const json =
      runner->config_json(mut::MutantId::bwd_missing_delta, backward.shape, Precision::bf16);
  CHECK(json.find("\"family\": \"fa2_sm80_bwd\"") != std::string::npos);
  CHECK(json.find("\"kQBlockN\"") != std::string::npos);
  CHECK(runner->config_json(std::nullopt, backward.shape, Precision::bf16).find("\"kBlockN\": 32") !=
        std::string::npos);
}

TEST_CASE("a runner without a registered backward says so for every backward mutant", "[tuner][mutants]") {
  auto runner = GpuMutantRunner::create({"fa1", kKernelsDir, runtime::TargetArch::sm_90a, {}, 64, 32});
  REQUIRE(runner);
  if (runner.value()->has_backward(Precision::bf16)) return;  // fa1_bwd has landed: nothing to check here
  auto const why = runner.value()->not_applicable(mut::MutantId::bwd_missing_delta, Precision::bf16);
  REQUIRE(why);
  CHECK(why->find("no family fa1_bwd") != std::string::npos);
  CHECK_FALSE(runner.value()->not_applicable(mut::MutantId::unrescaled_o, Precision::bf16));
}

TEST_CASE("a forward mutant whose switch is missing from kernels_src is not applicable, with the reason",
          "[tuner][mutants]") {
  test::TempKernelsDir dir;
  for (auto const& entry : std::filesystem::directory_iterator(kKernelsDir)) {
    std::string text = slurp(entry.path());
    if (entry.path().filename() == "fa_mask.cuh") {
      std::string const removed = "#ifdef FA_MUTANT_CAUSAL_DIAGONAL";
      auto const at = text.find(removed);
      REQUIRE(at != std::string::npos);
      text.replace(at, removed.size(), "#ifdef FA_MUTANT_CAUSAL_DIAGONAL_RENAMED");
    }
    dir.write(entry.path().filename().string(), text);
  }
  auto const runner = fa2_runner(dir.path());
  auto const why = runner->not_applicable(mut::MutantId::causal_diagonal, Precision::bf16);
  REQUIRE(why);
  CHECK(why->find("FA_MUTANT_CAUSAL_DIAGONAL occurs in no #if line of fa2_sm80_fwd.cu") != std::string::npos);
  CHECK_FALSE(runner->not_applicable(mut::MutantId::tail_unmasked, Precision::bf16));
}

TEST_CASE("each mutant's compile request carries exactly its own switch", "[tuner][mutants]") {
  auto const runner = fa2_runner();
  auto const correct = runner->compile_request(std::nullopt, small_problem(false));
  REQUIRE(correct);
  for (auto const& [name, value] : correct->defines) CHECK(name.rfind("FA_MUTANT_", 0) != 0);
  for (auto const& m : mut::kCatalogue) {
    INFO(m.name);
    auto const request = runner->compile_request(m.id, small_problem(false));
    REQUIRE(request);
    auto expected = correct->defines;
    expected.emplace(std::string(m.switch_name), "1");
    CHECK(request->defines == expected);
    CHECK(request->name_expressions == correct->name_expressions);
  }
  CHECK_THROWS_AS(runner->run(std::nullopt, {}, Precision::fp8_e4m3), std::runtime_error);
}

TEST_CASE("mutants compile for sm_90a once per problem class", "[tuner][mutants][nvrtc]") {
  auto runner = fa2_runner();
  auto const correct = runner->program(std::nullopt, small_problem(false));
  REQUIRE(correct);
  auto const mutant = runner->program(mut::MutantId::unrescaled_o, small_problem(false));
  REQUIRE(mutant);
  CHECK(mutant.value()->cubin != correct.value()->cubin);  // the switch changed the code
  Problem longer = small_problem(false);
  longer.shape.seqlen_q = longer.shape.seqlen_k = 333;  // same class: same name expression
  auto const again = runner->program(mut::MutantId::unrescaled_o, longer);
  REQUIRE(again);
  CHECK(again.value() == mutant.value());
  CHECK(runner->programs_held() == 2);
  auto const causal = runner->program(mut::MutantId::causal_diagonal, small_problem(true));
  REQUIRE(causal);
  CHECK(runner->programs_held() == 3);
}

TEST_CASE("fa-mutate's campaign on fa2_sm80 kills and names every applicable mutant",
          "[gpu][tuner][mutants]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  auto const& device = context->info();
  auto arch = runtime::arch_for_device(device.cc_major, device.cc_minor);
  REQUIRE(arch);
  // FA_KERNELS_DIR first: the device runs a copy of the checkout (scripts/gpu.sh sets it).
  auto const kernels_dir = runtime::resolve_kernels_dir();
  REQUIRE(kernels_dir);
  auto runner = GpuMutantRunner::create({"fa2_sm80", kernels_dir.value(), arch.value(), {}, 64, 32});
  REQUIRE(runner);
  mut::CampaignOptions options;
  options.precisions = {Precision::bf16};
  options.shape = small_problem(false).shape;
  options.diagnosis.threads = 0;
  mut::CampaignResult const result = mut::run_campaign(*runner.value(), mut::verifier_judge(0), options);
  for (auto const& b : result.baseline)
    for (auto const& f : b.failures) UNSCOPED_INFO("false positive: " << f);
  for (auto const& o : result.outcomes)
    UNSCOPED_INFO(mut::info(o.id).name << ": " << mut::status_name(o.status) << " "
                                       << (o.diagnosis.empty() ? "" : o.diagnosis.front()) << " " << o.reason
                                       << " " << o.verdict);
  CHECK(result.baseline_clean());
  // The 11 forward mutants of the catalogue, and the backward ones fa2_sm80_bwd carries.
  CHECK(result.count(mut::MutantStatus::killed) >= 11);
  CHECK(result.count(mut::MutantStatus::survived) == 0);
  CHECK(result.score() == Approx(100.0));
  CHECK(result.misnamed() == 0);
  CHECK(result.ok());
}

TEST_CASE("the GPU campaign's problems give every config two key blocks and more than one query block",
          "[tuner][mutants]") {
  common::AttentionShape base{1, 2, 1, 100, 100, 64, false, 0.0};
  auto check = [&](GpuMutantRunner const& runner, Precision precision, int want_block_m, int want_block_n) {
    mut::CampaignTiles const tiles = runner.largest_tiles(precision, base);
    CHECK(tiles.block_m == want_block_m);
    CHECK(tiles.block_n == want_block_n);
    common::AttentionShape const shape = mut::campaign_shape(base, tiles, numerics::all_input_families());
    for (numerics::InputFamily family : numerics::all_input_families()) {
      common::AttentionShape const s = numerics::family_shape(family, shape);
      INFO(runner.family() << " " << numerics::name(family) << ": N_q " << s.seqlen_q << ", N_k "
                           << s.seqlen_k);
      CHECK(s.seqlen_k >= 2 * tiles.block_n + 1);
      CHECK(s.seqlen_q >= 2 * tiles.block_m + 1);
    }
    return shape;
  };
  SECTION("fa2_fp8 at its default tiles (kBlockM 128, kBlockN 128 at d = 64): n = 100 was one key block") {
    auto runner = GpuMutantRunner::create({"fa2_fp8", kKernelsDir, runtime::TargetArch::sm_90a, {}, 0, 0});
    REQUIRE(runner);
    common::AttentionShape const shape = check(*runner.value(), Precision::fp8_e4m3, 128, 128);
    CHECK(shape.seqlen_k > 256);
  }
  SECTION("fa3_sm90: its rows are 64 per consumer warpgroup, whatever --block-m says") {
    // d64 default: 3 consumer warpgroups (192 rows); kBlockN from --block-n. A kBlockM key (fa3_sm90 has
    // none) once made the campaign size its problems for 64 rows, and the diagnosis replay 64-row tiles.
    // Its backward (fa3_sm90_bwd, reproducible config at d64: 128 queries x 128 keys) widens the keys.
    auto runner = GpuMutantRunner::create({"fa3_sm90", kKernelsDir, runtime::TargetArch::sm_90a, {}, 64, 64});
    REQUIRE(runner);
    CHECK(runner.value()->config_for(small_problem(false)).count("kBlockM") == 0);
    check(*runner.value(), Precision::bf16, 192, 128);
  }
  SECTION("fa2_sm80: the backward's reproducible tiles count too") {
    auto runner = fa2_runner();
    mut::CampaignTiles const tiles = runner->largest_tiles(Precision::bf16, base);
    CHECK(tiles.block_m >= 64);
    CHECK(tiles.block_n >= 32);
    check(*runner, Precision::bf16, tiles.block_m, tiles.block_n);
  }
}
