// The diagnosis on outputs walked as fa2_sm80 walks them: key blocks last to first (its default), and key
// blocks split among warp columns merged at the end (kWarpsN > 1). The five mutants whose output depends on
// the order the running max rises in (or, for missing-scale, on the LSE the kernel derives from the same
// scale) were killed but not named on the H200
// (experiments/mutation/results/2026-11-29-gpu-session1/mutants_gpu.txt); here each is emulated the kernel's
// way at its tiles and must be named first, from failing rows the verifier itself reports, while the correct
// algorithm walked the same way passes every input family.
#include <catch2/catch.hpp>

#include "numerics/campaign/verifier_judge.hpp"
#include "numerics/diagnosis/diagnose.hpp"
#include "numerics/emulator/emulator.hpp"
#include "numerics/input_families.hpp"

namespace {

using namespace fl::numerics;
namespace dx = fl::numerics::diagnosis;
namespace emu = fl::numerics::emulator;
namespace mut = fl::numerics::mutants;

// fa-mutate --target gpu's campaign shape (--seqlen 100 --head-dim 64 --heads-q 2 --heads-kv 1).
AttentionInputs campaign_inputs(InputFamily family, bool causal, fl::common::Precision precision) {
  FamilyRequest r;
  r.shape.heads_q = 2;
  r.shape.heads_kv = 1;
  r.shape.seqlen_q = r.shape.seqlen_k = 100;
  r.shape.head_dim = 64;
  r.shape.causal = causal;
  r.seed = 1;
  r.precision = precision;
  r.with_backward = false;
  return generate_family(family, r).inputs;
}

emu::EmulatorConfig kernel_walk(fl::common::Precision precision, emu::TileConfig tiles, emu::KeyOrder order,
                                int warps_n, mut::MutantSet mutants) {
  emu::EmulatorConfig c{precision, tiles, emu::LoopOrder::fa2, mutants, 1};
  c.key_order = order;
  c.warps_n = warps_n;
  return c;
}

dx::DiagnosisOptions options_for(int block_n, int warps_n) {
  dx::DiagnosisOptions o;
  o.threads = 1;
  if (std::find(o.block_n_candidates.begin(), o.block_n_candidates.end(), block_n) ==
      o.block_n_candidates.end())
    o.block_n_candidates.push_back(block_n);
  if (warps_n > 1)
    for (auto order : {emu::KeyOrder::first_to_last, emu::KeyOrder::last_to_first})
      o.walks.push_back({emu::LoopOrder::fa2, order, warps_n});
  return o;
}

constexpr mut::MutantId kOrderDependent[] = {mut::MutantId::unrescaled_o, mut::MutantId::unrescaled_l,
                                             mut::MutantId::normalize_in_loop, mut::MutantId::stale_max,
                                             mut::MutantId::missing_scale};

// The mutant on the input that killed it on the H200 ("normal, non-causal, seed 1"), observed through the
// verifier: it must fail, and the diagnosis must name it first.
void check_named(mut::MutantId id, emu::TileConfig tiles, emu::KeyOrder order, int warps_n,
                 fl::common::Precision precision) {
  std::string const name(mut::info(id).name);
  INFO(name << " kBlockM " << tiles.block_m << " kBlockN " << tiles.block_n << " warps_n " << warps_n << " "
            << (order == emu::KeyOrder::last_to_first ? "last to first" : "first to last"));
  auto const in = campaign_inputs(InputFamily::normal, false, precision);
  auto const observed =
      emu::emulate(in, kernel_walk(precision, tiles, order, warps_n, mut::MutantSet::only(id)));
  mut::Verdict const verdict = mut::verifier_judge(1)(in, precision)(observed);
  REQUIRE_FALSE(verdict.pass);
  auto const d = dx::diagnose(in, observed, precision, verdict.failing, options_for(tiles.block_n, warps_n));
  INFO(d.summary() << " / correct misses by " << d.correct.error.worst_row_error);
  REQUIRE_FALSE(d.entries.empty());
  CHECK(d.entries.front().id == name);
}

}  // namespace

TEST_CASE("mutants walked last to first at fa2_sm80's tiles are named first", "[diagnosis][walk]") {
  // 64 x 32: the GPU campaign's tiles; 128 x 64: fa2_sm80's default for d64 (the family's own choice when
  // fa-mutate does not override it).
  for (emu::TileConfig tiles : {emu::TileConfig{64, 32}, emu::TileConfig{128, 64}})
    for (mut::MutantId id : kOrderDependent)
      check_named(id, tiles, emu::KeyOrder::last_to_first, 1, fl::common::Precision::bf16);
}

TEST_CASE("mutants walked last to first are named in fp16 too", "[diagnosis][walk]") {
  for (mut::MutantId id : kOrderDependent)
    check_named(id, {64, 32}, emu::KeyOrder::last_to_first, 1, fl::common::Precision::fp16);
}

TEST_CASE("mutants with key blocks split among warp columns are named when that layout is tried",
          "[diagnosis][walk]") {
  for (mut::MutantId id : kOrderDependent)
    check_named(id, {64, 64}, emu::KeyOrder::last_to_first, 2, fl::common::Precision::bf16);
}

TEST_CASE("the correct algorithm walked as fa2_sm80 walks it passes every input family",
          "[diagnosis][walk]") {
  struct Walked {
    emu::TileConfig tiles;
    emu::KeyOrder order;
    int warps_n;
  };
  for (fl::common::Precision precision : {fl::common::Precision::bf16, fl::common::Precision::fp16})
    for (Walked const w : {Walked{{64, 32}, emu::KeyOrder::last_to_first, 1},
                           Walked{{64, 64}, emu::KeyOrder::last_to_first, 2},
                           Walked{{128, 64}, emu::KeyOrder::first_to_last, 4}})
      for (InputFamily family : all_input_families())
        for (bool causal : {false, true}) {
          if (family == InputFamily::fully_masked_rows && !causal) continue;
          auto const in = campaign_inputs(family, causal, precision);
          auto const out = emu::emulate(in, kernel_walk(precision, w.tiles, w.order, w.warps_n, {}));
          mut::Verdict const verdict = mut::verifier_judge(1)(in, precision)(out);
          INFO(name(family) << (causal ? " causal " : " non-causal ") << name(precision) << " warps_n "
                            << w.warps_n << ": " << verdict.summary);
          CHECK(verdict.pass);
        }
}

TEST_CASE("the correct algorithm walked last to first is not named as a bug", "[diagnosis][walk]") {
  auto const in = campaign_inputs(InputFamily::max_in_last_block, true, fl::common::Precision::bf16);
  auto const observed = emu::emulate(
      in, kernel_walk(fl::common::Precision::bf16, {64, 32}, emu::KeyOrder::last_to_first, 2, {}));
  std::vector<std::size_t> rows(query_rows(in.shape));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  auto const d = dx::diagnose(in, observed, fl::common::Precision::bf16, {rows, {}, {}}, options_for(32, 2));
  INFO(d.summary());
  CHECK(d.entries.empty());
}
