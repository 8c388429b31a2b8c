#include "numerics/gpu/kernel_check.hpp"

#include <catch2/catch.hpp>

#include <limits>

#include "device/families/families.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "tests/numerics/gpu/host_standard_attention.hpp"

using namespace fl;
using namespace fl::device;
using fl::common::Precision;
using fl::numerics::InputFamily;
using fl::test::standard_attention;

namespace {
Problem small(bool causal) {
  Problem p;
  p.shape = {1, 4, 2, 67, 67, 64, causal, 0.0};
  p.dtype = Precision::bf16;
  return p;
}
}  // namespace

TEST_CASE("numerics judges a correct forward output as pass on every input family", "[numerics]") {
  for (auto family : fl::numerics::all_input_families())
    for (bool causal : {false, true}) {
      if (!numerics::gpu::family_applies(family, causal)) continue;
      auto p = small(causal);
      auto const in = numerics::gpu::family_inputs(p, family, 11);
      auto const v = numerics::gpu::judge_forward(p, in, standard_attention(p, in));
      INFO(fl::numerics::name(family) << (causal ? " causal: " : " full: ") << v.summary);
      CHECK(v.pass);
    }
}

TEST_CASE("numerics fails a wrong element, a NaN and a wrong LSE", "[numerics]") {
  auto p = small(true);
  auto const in = numerics::gpu::family_inputs(p, InputFamily::normal, 5);
  auto const good = standard_attention(p, in);
  auto out = good;
  out.o[64 * 40 + 1] += 0.1f;
  CHECK_FALSE(numerics::gpu::judge_forward(p, in, out).pass);
  out = good;
  out.o[3] = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(numerics::gpu::judge_forward(p, in, out).pass);
  out = good;
  out.lse[66] += 0.01f;
  CHECK_FALSE(numerics::gpu::judge_forward(p, in, out).pass);
}

TEST_CASE("fully_masked_rows needs a causal kernel and makes the problem causal", "[numerics]") {
  CHECK_FALSE(numerics::gpu::family_applies(InputFamily::fully_masked_rows, false));
  CHECK(numerics::gpu::family_applies(InputFamily::fully_masked_rows, true));
  auto p = small(true);
  numerics::gpu::family_inputs(p, InputFamily::fully_masked_rows, 1);
  CHECK(p.shape.causal);
  CHECK(p.shape.seqlen_k < p.shape.seqlen_q);
}

TEST_CASE("an FP8 problem with P V in bf16: FA3's recipe for the check, bf16 P for the operands",
          "[numerics]") {
  Problem p = headline_problem(4096, 128, true, Precision::fp8_e4m3, Direction::forward);
  p.fp8.scaling = fl::common::Fp8Scaling::per_block;
  p.fp8.block_rows = 128;
  p.fp8.incoherent = true;
  p.fp8.bf16_pv = true;
  CHECK(numerics::gpu::recipe_of(p).probabilities ==
        Precision::fp8_e4m3);  // the check's recipe: FA3's tolerances
  CHECK(numerics::gpu::operand_recipe_of(p).probabilities == Precision::bf16);
  CHECK(numerics::gpu::operand_recipe_of(p).fp8_variants.has(fl::numerics::Fp8Variant::bf16_pv));
}

TEST_CASE("naive with kScoreBits = 16 is judged by the bound of 16-bit scores, kScoreBits = 32 by fp32's",
          "[numerics]") {
  NaiveFamily const f;
  for (auto dtype : {Precision::bf16, Precision::fp16}) {
    auto p = small(false);
    p.dtype = dtype;
    auto config = f.default_config(p);
    CHECK(numerics::gpu::recipe_of(f, config, p).scores == Precision::fp32);
    CHECK_FALSE(
        numerics::gpu::check_options(numerics::gpu::recipe_of(f, config, p), p, 0, 1).use_custom_recipe);
    config["kScoreBits"] = 16;
    auto const recipe = numerics::gpu::recipe_of(f, config, p);
    CHECK(recipe.scores == dtype);
    CHECK(numerics::gpu::check_options(recipe, p, 0, 1).use_custom_recipe);
    auto const in = numerics::gpu::family_inputs(p, InputFamily::normal, 5);
    auto const out = standard_attention(p, in, true);
    auto const own = numerics::gpu::judge_forward(recipe, p, in, out, 0, 1);
    INFO(fl::common::name(dtype) << " 16-bit S by its own bound: " << own.summary);
    CHECK(own.pass);
    // By the fp32-score bound the same output fails in LSE: the H200's naive at 86-324x the bound.
    auto const fp32 = numerics::gpu::judge_forward(p, in, out);
    INFO("by the fp32-score bound: " << fp32.summary);
    CHECK_FALSE(fp32.pass);
  }
}
