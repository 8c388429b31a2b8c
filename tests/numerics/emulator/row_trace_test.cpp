// trace_row is the emulator's FA-2 arithmetic for one row, not a second implementation: in fp32 its final
// output and LSE equal emulate_forward's (kBlockM = 1) bit for bit for the correct algorithm and every
// forward mutant, on inputs that make each one act, in both key orders; in fp64 it is the exact answer.
#include "numerics/emulator/row_trace.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "numerics/input_families.hpp"
#include "numerics/mutants/catalogue.hpp"
#include "numerics/quantized_operands.hpp"
#include "numerics/reference.hpp"

namespace {

using namespace fl::numerics;
namespace emu = fl::numerics::emulator;

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

AttentionInputs family_inputs(InputFamily family, bool causal, fl::common::Precision precision) {
  FamilyRequest request;
  request.shape.seqlen_q = 40;
  request.shape.seqlen_k = 40;
  request.shape.head_dim = 8;
  request.shape.causal = causal;
  request.seed = 3;
  request.precision = precision;
  request.with_backward = false;
  return generate_family(family, request).inputs;
}

}  // namespace

TEST_CASE("trace_row in fp32 ends exactly where emulate_forward does, for every forward mutant",
          "[emulator]") {
  struct Case {
    InputFamily family;
    bool causal;
    fl::common::Precision precision;
  };
  // normal: the order-dependent bugs; all_negative: m-init-zero; ragged_tail: tail-unmasked;
  // fully_masked_rows: masked-row-nan and the rows that see nothing; fp8: the FP8 path's P scale.
  Case const cases[] = {{InputFamily::normal, false, fl::common::Precision::bf16},
                        {InputFamily::normal, true, fl::common::Precision::fp16},
                        {InputFamily::all_negative, false, fl::common::Precision::bf16},
                        {InputFamily::ragged_tail, false, fl::common::Precision::fp32},
                        {InputFamily::fully_masked_rows, true, fl::common::Precision::bf16},
                        {InputFamily::normal, false, fl::common::Precision::fp8_e4m3}};
  for (Case const& c : cases) {
    AttentionInputs const in = family_inputs(c.family, c.causal, c.precision);
    PrecisionRecipe const recipe = recipe_for(c.precision);
    QuantizedOperands const ops = quantize_operands(in, recipe);
    std::vector<mutants::MutantSet> sets = {mutants::MutantSet::none()};
    for (auto const& m : mutants::kCatalogue)
      if (m.kind == mutants::MutantKind::fwd || (m.kind == mutants::MutantKind::fp8 && is_fp8(c.precision)))
        sets.push_back(mutants::MutantSet::only(m.id));
    for (emu::KeyOrder order : {emu::KeyOrder::first_to_last, emu::KeyOrder::last_to_first}) {
      for (mutants::MutantSet const set : sets) {
        emu::EmulatorConfig config;
        config.precision = c.precision;
        config.tiles = {1, 16};
        config.key_order = order;
        config.mutants = set;
        config.threads = 1;
        emu::ForwardResult const whole = emu::emulate_forward(ops, recipe, config);
        auto const d = static_cast<std::size_t>(in.shape.head_dim);
        for (std::size_t row : {std::size_t{0}, std::size_t{9}, in.shape.lse_elements() - 1}) {
          emu::RowTrace const trace = emu::trace_row(ops, recipe, config, row);
          INFO("family " << name(c.family) << " row " << row << " order " << static_cast<int>(order));
          REQUIRE(trace.output.size() == d);
          bool all_same = same_bits(static_cast<float>(trace.lse), whole.lse[row]);
          for (std::size_t e = 0; e < d; ++e)
            all_same = all_same && same_bits(static_cast<float>(trace.output[e]), whole.o[row * d + e]);
          CHECK(all_same);
          // The last block's output so far is the row's O before the final rounding.
          if (!trace.blocks.empty() && c.precision == fl::common::Precision::fp32)
            CHECK(static_cast<float>(trace.blocks.back().output_so_far[0]) == whole.o[row * d]);
        }
      }
    }
  }
}

TEST_CASE("trace_row in fp64 is the float64 answer and records each block's state", "[emulator]") {
  AttentionInputs const in = family_inputs(InputFamily::normal, false, fl::common::Precision::fp32);
  PrecisionRecipe const recipe = recipe_for(fl::common::Precision::fp32);
  QuantizedOperands const ops = quantize_operands(in, recipe);
  emu::EmulatorConfig config;
  config.tiles = {1, 16};
  RowSample sample;
  sample.query_rows = {5};
  SampledOutputs const ref = reference_sampled(in, sample);
  emu::RowTrace const trace = emu::trace_row(ops, recipe, config, 5, emu::TraceArithmetic::fp64);
  REQUIRE(trace.blocks.size() == 3);  // 40 keys in blocks of 16: 16, 16, 8
  CHECK(trace.blocks[2].first_key == 32);
  CHECK(trace.blocks[2].end_key == 40);
  CHECK(trace.blocks[0].alpha == 0.0);  // exp(-inf - m): the first block has nothing to rescale
  for (std::size_t i = 1; i < trace.blocks.size(); ++i) {
    CHECK(trace.blocks[i].m >= trace.blocks[i - 1].m);
    CHECK(trace.blocks[i].alpha ==
          Approx(std::exp((trace.blocks[i - 1].m - trace.blocks[i].m) * in.shape.scale())));
  }
  for (std::size_t e = 0; e < 8; ++e) CHECK(std::fabs(trace.output[e] - ref.o[e]) < 1e-12);
  CHECK(std::fabs(trace.lse - ref.lse[0]) < 1e-12);
}

TEST_CASE("trace_row refuses a row outside the problem and the FA-1 order", "[emulator]") {
  AttentionInputs const in = family_inputs(InputFamily::normal, false, fl::common::Precision::fp32);
  PrecisionRecipe const recipe = recipe_for(fl::common::Precision::fp32);
  QuantizedOperands const ops = quantize_operands(in, recipe);
  emu::EmulatorConfig config;
  CHECK_THROWS_AS(emu::trace_row(ops, recipe, config, 40), std::invalid_argument);
  config.loop_order = emu::LoopOrder::fa1;
  CHECK_THROWS_AS(emu::trace_row(ops, recipe, config, 0), std::invalid_argument);
}
