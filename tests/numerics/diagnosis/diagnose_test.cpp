// The diagnosis on outputs it did not produce itself: the correct algorithm in the other loop order is never
// named as a bug, a perturbation unlike any catalogued bug gets "no known signature", and a mutant run in
// FA-1 order (outer loop over keys) is named by a search that starts in FA-2 order.
#include "numerics/diagnosis/diagnose.hpp"

#include <catch2/catch.hpp>

#include "numerics/emulator/emulator.hpp"
#include "numerics/input_families.hpp"

namespace {

using namespace fl::numerics;
namespace dx = fl::numerics::diagnosis;
namespace emu = fl::numerics::emulator;

AttentionInputs inputs_of(InputFamily family, bool causal) {
  FamilyRequest r;
  r.shape.heads_q = 2;
  r.shape.heads_kv = 1;
  r.shape.seqlen_q = r.shape.seqlen_k = 80;
  r.shape.head_dim = 16;
  r.shape.causal = causal;
  r.seed = 3;
  r.precision = fl::common::Precision::bf16;
  r.with_backward = false;
  return generate_family(family, r).inputs;
}

std::vector<std::size_t> all_rows(fl::common::AttentionShape const& s) {
  std::vector<std::size_t> rows(query_rows(s));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

dx::DiagnosisOptions quick_options() {
  dx::DiagnosisOptions o;
  o.threads = 1;
  return o;
}

}  // namespace

TEST_CASE("the correct algorithm in another loop order and tile is not named as a bug", "[diagnosis]") {
  auto const in = inputs_of(InputFamily::max_in_last_block, true);
  auto const observed =
      emu::emulate(in, {fl::common::Precision::bf16, {128, 48}, emu::LoopOrder::fa1, {}, 1});
  auto const d =
      dx::diagnose(in, observed, fl::common::Precision::bf16, {all_rows(in.shape), {}, {}}, quick_options());
  INFO(d.summary());
  CHECK(d.entries.empty());
  CHECK(d.summary() == "no known signature");
}

TEST_CASE("a perturbation unlike any catalogued bug has no known signature", "[diagnosis]") {
  auto const in = inputs_of(InputFamily::normal, false);
  auto observed = emu::emulate(in, {fl::common::Precision::bf16, {64, 32}, emu::LoopOrder::fa2, {}, 1});
  // Every 7th output element flipped in sign: large, scattered, and no softmax bug does this.
  for (std::size_t i = 0; i < observed.o.size(); i += 7) observed.o[i] = -observed.o[i];
  std::vector<std::size_t> const rows = all_rows(in.shape);
  auto const d = dx::diagnose(in, observed, fl::common::Precision::bf16, {rows, {}, {}}, quick_options());
  INFO(d.summary());
  CHECK(d.entries.empty());
}

TEST_CASE("a mutant observed in FA-1 order is named, with the shared row property as evidence",
          "[diagnosis]") {
  auto const in = inputs_of(InputFamily::max_in_last_block, false);
  emu::EmulatorConfig config{
      fl::common::Precision::bf16,
      {32, 16},
      emu::LoopOrder::fa1,
      fl::numerics::mutants::MutantSet::only(fl::numerics::mutants::MutantId::unrescaled_o),
      1};
  auto const observed = emu::emulate(in, config);
  auto const d =
      dx::diagnose(in, observed, fl::common::Precision::bf16, {all_rows(in.shape), {}, {}}, quick_options());
  INFO(d.summary());
  REQUIRE_FALSE(d.entries.empty());
  CHECK(d.entries.front().id == "unrescaled-o");
  CHECK(d.entries.front().evidence.find("max in a late key block") != std::string::npos);
  CHECK(d.entries.front().match_error * dx::kFarBetterRatio <= d.correct.error.worst_row_error);
}

TEST_CASE("a backward bug over the replay's work cap is named by the float64 backward models",
          "[diagnosis][backward]") {
  // 2 heads, N 320, d 64: every backward replay computes all 640 query rows, about 2.5e10 multiply-adds over
  // the runs, over kMaxDiagnosisWork; the replay declines, as it did for fa3_sm90_bwd on the H200.
  FamilyRequest r;
  r.shape.heads_q = 2;
  r.shape.heads_kv = 1;
  r.shape.seqlen_q = r.shape.seqlen_k = 320;
  r.shape.head_dim = 64;
  r.seed = 4;
  r.precision = fl::common::Precision::bf16;
  r.with_backward = true;
  AttentionInputs const in = generate_family(InputFamily::normal, r).inputs;
  // The implementation's tiles (80 x 48) are not the replay's.
  emu::EmulatorConfig config{
      fl::common::Precision::bf16,
      {80, 48},
      emu::LoopOrder::fa2,
      fl::numerics::mutants::MutantSet::only(fl::numerics::mutants::MutantId::bwd_missing_delta),
      1};
  AttentionOutputs const observed = emu::emulate(in, config);
  std::vector<std::size_t> keys(key_rows(in.shape));
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i;
  auto const d = dx::diagnose(in, observed, fl::common::Precision::bf16, {{}, all_rows(in.shape), keys},
                              quick_options());
  INFO(d.summary());
  CHECK(d.backward);
  REQUIRE_FALSE(d.entries.empty());
  CHECK(d.entries.front().id == "bwd-missing-delta");
  CHECK(d.entries.front().evidence.find("dV") != std::string::npos);
  CHECK(d.declined.empty());
}
