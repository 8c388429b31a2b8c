// The float64 bug models name a block-dependent bug at a tile the emulator search does not try (kBlockN
// 40 and 48, not powers of two), in either key order, from outputs of the emulator; the correct algorithm at
// those tiles is not named; the backward models name each CPU backward bug with the gradients it breaks.
#include "numerics/diagnosis/block_models.hpp"

#include <catch2/catch.hpp>

#include "numerics/diagnosis/fa_check_diagnoser.hpp"
#include "numerics/emulator/emulator.hpp"
#include "numerics/input_families.hpp"
#include "numerics/reference.hpp"

namespace {

using namespace fl::numerics;
namespace dx = fl::numerics::diagnosis;
namespace emu = fl::numerics::emulator;
using fl::numerics::mutants::MutantId;
using fl::numerics::mutants::MutantSet;

AttentionInputs inputs_of(InputFamily family, int n, bool backward) {
  FamilyRequest r;
  r.shape.heads_q = 2;
  r.shape.heads_kv = 1;
  r.shape.seqlen_q = r.shape.seqlen_k = n;
  r.shape.head_dim = 16;
  r.seed = 7;
  r.precision = fl::common::Precision::bf16;
  r.with_backward = backward;
  return generate_family(family, r).inputs;
}

std::vector<std::size_t> all_rows(fl::common::AttentionShape const& s) {
  std::vector<std::size_t> rows(query_rows(s));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

std::string first_id(std::vector<DiagnosisEntry> const& entries) {
  return entries.empty() ? "(none)" : entries.front().id;
}

emu::EmulatorConfig config(int block_n, emu::KeyOrder order, MutantSet mutants) {
  emu::EmulatorConfig c;
  c.precision = fl::common::Precision::bf16;
  c.tiles = {32, block_n};
  c.key_order = order;
  c.mutants = mutants;
  c.threads = 1;
  return c;
}

}  // namespace

TEST_CASE("block-dependent forward bugs are named at tiles outside the emulator search",
          "[diagnosis][models]") {
  dx::ModelOptions const options{{}, 1};
  for (int block_n : {40, 48})
    for (auto order : {emu::KeyOrder::first_to_last, emu::KeyOrder::last_to_first}) {
      // The bugs act when the running max rises: put the maximum in the block visited last (normalize-in-loop
      // needs it to rise gently: a maximum far above the rest makes the earlier blocks' weight vanish).
      AttentionInputs const in =
          inputs_of(order == emu::KeyOrder::first_to_last ? InputFamily::max_in_last_block
                                                          : InputFamily::max_in_first_block,
                    120, false);
      AttentionInputs const gentle = inputs_of(InputFamily::normal, 120, false);
      AttentionOutputs const right = emu::emulate(in, config(block_n, order, MutantSet::none()));
      INFO("kBlockN " << block_n);
      CHECK(dx::model_forward_bugs(in, right, all_rows(in.shape), options).empty());
      for (MutantId id : {MutantId::unrescaled_o, MutantId::unrescaled_l, MutantId::stale_max,
                          MutantId::normalize_in_loop}) {
        AttentionInputs const& inputs = id == MutantId::normalize_in_loop ? gentle : in;
        AttentionOutputs const observed = emu::emulate(inputs, config(block_n, order, MutantSet::only(id)));
        auto const entries = dx::model_forward_bugs(inputs, observed, all_rows(inputs.shape), options);
        INFO(fl::numerics::mutants::info(id).name);
        CHECK(first_id(entries) == fl::numerics::mutants::info(id).name);
        if (!entries.empty()) CHECK(entries.front().strength > dx::kFarBetterRatio);
      }
    }
}

TEST_CASE("backward bugs are named from dQ, dK, dV with the gradients they break", "[diagnosis][models]") {
  AttentionInputs const in = inputs_of(InputFamily::normal, 72, true);
  dx::ModelOptions const options{{}, 1};
  AttentionOutputs const right =
      emu::emulate(in, config(40, emu::KeyOrder::first_to_last, MutantSet::none()));
  CHECK(dx::model_backward_bugs(in, right, options).empty());
  for (MutantId id : {MutantId::bwd_missing_delta, MutantId::bwd_dk_missing_scale, MutantId::bwd_dq_overwrite,
                      MutantId::bwd_p_without_l}) {
    AttentionOutputs const observed =
        emu::emulate(in, config(40, emu::KeyOrder::first_to_last, MutantSet::only(id)));
    auto const entries = dx::model_backward_bugs(in, observed, options);
    INFO(fl::numerics::mutants::info(id).name);
    REQUIRE(first_id(entries) == fl::numerics::mutants::info(id).name);
    std::string const& evidence = entries.front().evidence;
    INFO(evidence);
    if (id == MutantId::bwd_dk_missing_scale) CHECK(evidence.find("it matches dQ") != std::string::npos);
    if (id == MutantId::bwd_missing_delta) CHECK(evidence.find("it matches dV") != std::string::npos);
    if (id == MutantId::bwd_dq_overwrite) CHECK(evidence.find("kBlockN 40") != std::string::npos);
  }
}

TEST_CASE("a bug model over its work cap says so in the check's notes instead of naming nothing silently",
          "[diagnosis][models]") {
  // Forward: 192 compared rows x 16384 keys x d 64 x ~36 block sizes x 3 > 4e9; backward: 1024 x 16384 x 64 x
  // 8 > 4e9. Both decline before touching an element, so the tensors can stay zero.
  AttentionInputs in;
  in.shape.seqlen_q = 1024;
  in.shape.seqlen_k = 16384;
  in.shape.head_dim = 64;
  in.q.assign(in.shape.q_elements(), 0.0);
  in.k.assign(in.shape.kv_elements(), 0.0);
  in.v.assign(in.shape.kv_elements(), 0.0);
  in.d_o.assign(in.shape.q_elements(), 0.0);
  AttentionOutputs observed;
  observed.o.assign(in.shape.q_elements(), 1.0);
  observed.dq = observed.o;
  observed.dk.assign(in.shape.kv_elements(), 1.0);
  observed.dv = observed.dk;
  std::vector<std::string> notes;
  dx::ModelOptions options;
  options.declined = &notes;
  CHECK(dx::model_forward_bugs(in, observed, all_rows(in.shape), options).empty());
  CHECK(dx::model_backward_bugs(in, observed, options).empty());
  REQUIRE(notes.size() == 2);
  CHECK_THAT(notes[0], Catch::StartsWith("diagnosis: the float64 models of the forward bugs not tried") &&
                           Catch::Contains("multiply-adds, above its cap of 4e+09"));
  CHECK_THAT(notes[1], Catch::StartsWith("diagnosis: the float64 models of the backward bugs not tried"));
}

TEST_CASE("fa-check's notes say which models a long problem's diagnosis did not try", "[diagnosis][models]") {
  FamilyRequest r;
  r.shape.seqlen_q = 64;
  r.shape.seqlen_k = 16384;  // 64 rows x 16384 keys x d 64 x the block sizes x 3 > 4e9 for the models
  r.shape.head_dim = 64;
  r.seed = 2;
  r.precision = fl::common::Precision::bf16;
  r.with_backward = false;
  AttentionInputs const in = generate_family(InputFamily::normal, r).inputs;
  // The softmax scale 1/d instead of 1/sqrt(d): an interface mistake names it, so the (slow) emulator search
  // is not needed, while the bug models are over their cap.
  AttentionInputs wrong_scale = in;
  wrong_scale.shape.softmax_scale = 1.0 / 64;
  AttentionOutputs const observed = reference_attention(wrong_scale);
  CheckOptions options;
  options.claimed = fl::common::Precision::bf16;
  CheckResult const result = run_check(in, observed, options, dx::make_fa_check_diagnoser());
  CHECK_FALSE(result.pass);
  REQUIRE_FALSE(result.diagnosis.empty());
  CHECK(result.diagnosis.front().id == "scale-1-over-d");
  bool forward_models_declined = false;
  for (auto const& note : result.notes)
    forward_models_declined = forward_models_declined ||
                              note.starts_with("diagnosis: the float64 models of the forward bugs not tried");
  INFO(result.notes.size() << " notes");
  CHECK(forward_models_declined);
}
