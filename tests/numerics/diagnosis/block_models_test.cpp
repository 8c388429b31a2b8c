// The float64 bug models name a block-dependent bug at a tile the emulator search does not try (kBlockN
// 40 and 48, not powers of two), in either key order, from outputs of the emulator; the correct algorithm at
// those tiles is not named; the backward models name each CPU backward bug with the gradients it breaks.
#include "numerics/diagnosis/block_models.hpp"

#include <catch2/catch.hpp>

#include "numerics/emulator/emulator.hpp"
#include "numerics/input_families.hpp"

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
  r.precision = Precision::bf16;
  r.with_backward = backward;
  return generate_family(family, r).inputs;
}

std::vector<std::size_t> all_rows(AttentionShape const& s) {
  std::vector<std::size_t> rows(query_rows(s));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

std::string first_id(std::vector<DiagnosisEntry> const& entries) {
  return entries.empty() ? "(none)" : entries.front().id;
}

emu::EmulatorConfig config(int block_n, emu::KeyOrder order, MutantSet mutants) {
  emu::EmulatorConfig c;
  c.precision = Precision::bf16;
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
