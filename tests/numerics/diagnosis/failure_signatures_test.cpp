// masked-row-nan is named by its failure pattern, for any implementation's tiles and in 16-bit and FP8:
// outputs that are correct (the emulator at 80 x 48 tiles, which the replay does not try) except NaN on
// the fully masked rows are named masked-row-nan first, both by fa-mutate's `diagnose` and by fa-check's
// diagnoser; outputs with any other failure are not.
#include "numerics/diagnosis/failure_signatures.hpp"

#include <catch2/catch.hpp>
#include <limits>

#include "numerics/check.hpp"
#include "numerics/diagnosis/diagnose.hpp"
#include "numerics/diagnosis/fa_check_diagnoser.hpp"
#include "numerics/emulator/emulator.hpp"
#include "numerics/input_families.hpp"

namespace {

using namespace fl::numerics;
namespace dx = fl::numerics::diagnosis;
namespace emu = fl::numerics::emulator;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// An implementation's tiles that no emulator replay tries (kBlockM 16..256 in powers of two).
constexpr emu::TileConfig kForeignTiles{80, 48};
// N_q = 400, N_k = 300 (the fully_masked_rows family): query rows 0..99 of each head see no key.
constexpr int kSeqlenQ = 400, kMaskedRows = 100;

AttentionInputs masked_inputs(fl::common::Precision precision, int heads = 1, int seqlen_q = kSeqlenQ,
                              int head_dim = 16) {
  FamilyRequest r;
  r.shape.heads_q = heads;
  r.shape.heads_kv = 1;
  r.shape.seqlen_q = seqlen_q;
  r.shape.head_dim = head_dim;
  r.seed = 5;
  r.precision = precision;
  r.with_backward = false;
  AttentionInputs in = generate_family(InputFamily::fully_masked_rows, r).inputs;
  REQUIRE(visible_keys(in.shape, seqlen_q / 4 - 1) == 0);
  REQUIRE(visible_keys(in.shape, seqlen_q / 4) == 1);
  return in;
}

// The correct algorithm at foreign tiles in the claimed precision (FP8 quantises Q, K, V and P as the FP8
// path does), then NaN in O and LSE on query rows [first, last) of every head.
AttentionOutputs nan_on_masked_rows(AttentionInputs const& in, fl::common::Precision precision, int first,
                                    int last = kMaskedRows) {
  AttentionOutputs out = emu::emulate(in, {precision, kForeignTiles, emu::LoopOrder::fa2, {}, 1});
  auto const d = std::size_t(in.shape.head_dim);
  for (std::size_t r = 0; r < query_rows(in.shape); ++r) {
    int const pos = query_row_index(in.shape, r).pos;
    if (pos < first || pos >= last) continue;
    for (std::size_t e = 0; e < d; ++e) out.o[r * d + e] = kNaN;
    out.lse[r] = kNaN;
  }
  return out;
}

CheckResult checked(AttentionInputs const& in, AttentionOutputs const& observed,
                    fl::common::Precision precision) {
  CheckOptions options;
  options.claimed = precision;
  options.threads = 1;
  return run_check(in, observed, options, dx::make_fa_check_diagnoser({}, 1));
}

dx::Diagnosis diagnosed(AttentionInputs const& in, AttentionOutputs const& observed,
                        fl::common::Precision precision, CheckResult const& result) {
  dx::DiagnosisOptions options;
  options.threads = 1;
  return dx::diagnose(in, observed, precision, {result.judgement.failing_query_rows, {}, {}}, options);
}

}  // namespace

TEST_CASE("NaN on exactly the fully masked rows is named masked-row-nan first at tiles no replay tries",
          "[diagnosis][signatures]") {
  fl::common::Precision const precision =
      GENERATE(fl::common::Precision::bf16, fl::common::Precision::fp8_e4m3);
  // Every fully masked row NaN, or (a kernel that skips a query tile with no visible key, as FlashAttention
  // does) only those sharing the 80-row tile with the first visible rows: rows 80..99.
  int const first_nan = GENERATE(0, kForeignTiles.block_m);
  INFO(name(precision) << ", NaN from row " << first_nan);
  AttentionInputs const in = masked_inputs(precision);
  AttentionOutputs const observed = nan_on_masked_rows(in, precision, first_nan);

  CheckResult const result = checked(in, observed, precision);
  REQUIRE_FALSE(result.pass);
  REQUIRE(result.judgement.failing_query_rows.size() == std::size_t(kMaskedRows - first_nan));
  REQUIRE_FALSE(result.diagnosis.empty());
  INFO(result.diagnosis.front().evidence);
  CHECK(result.diagnosis.front().id == "masked-row-nan");
  CHECK(result.diagnosis.front().evidence.find("fully masked") != std::string::npos);
  CHECK(result.diagnosis.front().fix.find("guard") != std::string::npos);

  dx::Diagnosis const d = diagnosed(in, observed, precision, result);
  INFO(d.summary());
  REQUIRE_FALSE(d.entries.empty());
  CHECK(d.entries.front().id == "masked-row-nan");
  CHECK(d.entries.front().evidence.find("every other row passes") != std::string::npos);
}

TEST_CASE("NaN on the fully masked rows of the H200 campaign's problem is named although no replay runs",
          "[diagnosis][signatures]") {
  // fa-mutate's fa2_fp8 run (2026-12-01): 2 heads, N_q 1020, N_k 765, d 64, 510 NaN rows. The replay needs
  // ~2e11 multiply-adds there, over its cap, and named nothing.
  fl::common::Precision const precision =
      GENERATE(fl::common::Precision::bf16, fl::common::Precision::fp8_e4m3);
  INFO(name(precision));
  constexpr int kCampaignSeqlenQ = 1020;
  AttentionInputs const in = masked_inputs(precision, 2, kCampaignSeqlenQ, 64);
  AttentionOutputs const observed = nan_on_masked_rows(in, precision, 0, kCampaignSeqlenQ / 4);

  CheckResult const result = checked(in, observed, precision);
  REQUIRE(result.judgement.failing_query_rows.size() == 2 * std::size_t(kCampaignSeqlenQ / 4));
  REQUIRE_FALSE(result.diagnosis.empty());
  CHECK(result.diagnosis.front().id == "masked-row-nan");
  dx::Diagnosis const d = diagnosed(in, observed, precision, result);
  INFO(d.summary());
  REQUIRE_FALSE(d.entries.empty());
  CHECK(d.entries.front().id == "masked-row-nan");
  CHECK(d.declined.empty());
}

TEST_CASE("NaN on the rows a last-to-first walk at 80 x 48 starts with no key is named masked-row-nan first",
          "[diagnosis][signatures]") {
  // N_q = N_k, causal: no row is fully masked, but walking key blocks last to first (FlashAttention-3's
  // order), a row that sees no key of its tile's first block keeps m = -inf there and turns NaN.
  fl::common::Precision const precision =
      GENERATE(fl::common::Precision::bf16, fl::common::Precision::fp8_e4m3);
  INFO(name(precision));
  FamilyRequest r;
  r.shape.seqlen_q = r.shape.seqlen_k = kSeqlenQ;
  r.shape.head_dim = 16;
  r.shape.causal = true;
  r.seed = 6;
  r.precision = precision;
  r.with_backward = false;
  AttentionInputs const in = generate_family(InputFamily::normal, r).inputs;
  emu::EmulatorConfig config{
      precision, kForeignTiles, emu::LoopOrder::fa2,
      fl::numerics::mutants::MutantSet::only(fl::numerics::mutants::MutantId::masked_row_nan), 1};
  config.key_order = emu::KeyOrder::last_to_first;
  AttentionOutputs const observed = emu::emulate(in, config);

  CheckResult const result = checked(in, observed, precision);
  REQUIRE_FALSE(result.pass);
  REQUIRE_FALSE(result.diagnosis.empty());
  INFO(result.diagnosis.front().evidence);
  CHECK(result.diagnosis.front().id == "masked-row-nan");
  CHECK(result.diagnosis.front().evidence.find("kBlockM 80, kBlockN 48") != std::string::npos);

  dx::Diagnosis const d = diagnosed(in, observed, precision, result);
  INFO(d.summary());
  REQUIRE_FALSE(d.entries.empty());
  CHECK(d.entries.front().id == "masked-row-nan");
}

TEST_CASE("the masked-row-nan signature holds only for that pattern", "[diagnosis][signatures]") {
  AttentionInputs const in = masked_inputs(fl::common::Precision::bf16);
  auto const d = std::size_t(in.shape.head_dim);
  AttentionOutputs const correct =
      nan_on_masked_rows(in, fl::common::Precision::bf16, kMaskedRows);  // no NaN at all
  std::vector<std::size_t> const masked_failing{90, 95, 99};

  SECTION("a correct output") {
    CHECK_FALSE(dx::masked_row_nan_signature(in, correct, {}));
    CHECK_FALSE(dx::masked_row_nan_signature(in, correct, masked_failing));  // failing but finite
  }
  SECTION("NaN on the masked rows and a visible row wrong too") {
    AttentionOutputs observed = nan_on_masked_rows(in, fl::common::Precision::bf16, 90);
    observed.o[200 * d] += 1.0;
    std::vector<std::size_t> failing = masked_failing;
    failing.push_back(200);
    CHECK_FALSE(dx::masked_row_nan_signature(in, observed, failing));
  }
  SECTION("NaN on a row that sees keys") {
    AttentionOutputs observed = nan_on_masked_rows(in, fl::common::Precision::bf16, 90);
    observed.o[150 * d + 3] = kNaN;  // an unchecked row (a sampled check) is still looked at
    CHECK_FALSE(dx::masked_row_nan_signature(in, observed, masked_failing));
  }
  SECTION("a masked row that is finite but wrong") {
    AttentionOutputs observed = correct;
    observed.o[95 * d] = 0.5;
    CHECK_FALSE(dx::masked_row_nan_signature(in, observed, {95}));
  }
  SECTION("a non-causal problem has no fully masked row") {
    AttentionInputs full = in;
    full.shape.causal = false;
    AttentionOutputs observed = correct;
    observed.o[95 * d] = kNaN;
    CHECK_FALSE(dx::masked_row_nan_signature(full, observed, {95}));
  }
  SECTION("the pattern itself") {
    AttentionOutputs const observed = nan_on_masked_rows(in, fl::common::Precision::bf16, 90);
    auto const entry = dx::masked_row_nan_signature(in, observed, {90, 91, 92, 93, 94, 95, 96, 97, 98, 99});
    REQUIRE(entry);
    CHECK(entry->id == "masked-row-nan");
    CHECK(entry->evidence.find("10 of the 100 fully masked rows") != std::string::npos);
  }
}
