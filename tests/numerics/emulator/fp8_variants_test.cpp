// The FP8 variants of numerics/fp8_variants.hpp, each on a small problem built so that it is the only thing
// that changes the error: operands exactly representable in e4m3 (values 0, +-1, +-2, +-4 with per-tensor
// scales 224 or 112), so the P-side variants are measured alone, as arXiv 2606.06521 isolates its P cast.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "numerics/emulator/emulator.hpp"
#include "numerics/input_families.hpp"
#include "numerics/metrics.hpp"
#include "numerics/reference.hpp"

namespace {

using namespace fl::numerics;
namespace emu = fl::numerics::emulator;

AttentionShape one_head(int nq, int nk, int d) {
  AttentionShape s;
  s.batch = s.heads_q = s.heads_kv = 1;
  s.seqlen_q = nq;
  s.seqlen_k = nk;
  s.head_dim = d;
  return s;
}

// Values drawn from `choices` (all exactly representable after e4m3 scaling, see the header).
std::vector<double> draw(std::size_t n, std::vector<double> const& choices, std::mt19937& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, choices.size() - 1);
  std::vector<double> out(n);
  for (double& x : out) x = choices[pick(rng)];
  return out;
}

// An attention sink: key 0 scores 12 above the rest for every query (q's first 6 dims 2, key 0's 4: a dot
// product of 48, scaled by 1/4), V_0 = 0, the other values positive, so the non-sink keys carry the whole
// output (their total weight ~2047 e^-12 = 1.3%). Walked first to last with FlashAttention-3's static 2^8,
// their P x 2^8 ~ 1.6e-3 falls into e4m3's subnormals (step 2^-9): the paper's P collapse.
AttentionInputs sink_problem() {
  AttentionShape const s = one_head(64, 2048, 16);
  std::mt19937 rng(7);
  AttentionInputs in{s,
                     draw(s.q_elements(), {-1, 0, 1}, rng),
                     draw(s.kv_elements(), {-1, 0, 1}, rng),
                     draw(s.kv_elements(), {1, 2, 4}, rng),
                     {}};
  auto const d = std::size_t(s.head_dim);
  for (std::size_t i = 0; i < std::size_t(s.seqlen_q); ++i)
    for (std::size_t e = 0; e < 6; ++e) in.q[i * d + e] = 2;
  for (std::size_t j = 0; j < std::size_t(s.seqlen_k); ++j)
    for (std::size_t e = 0; e < 6; ++e) in.k[j * d + e] = j == 0 ? 4 : 0;
  for (std::size_t e = 0; e < d; ++e) in.v[e] = 0;
  return in;
}

double o_rmse(AttentionInputs const& in, Fp8Variants variants) {
  PrecisionRecipe const recipe = with_fp8_variants(recipe_for(Precision::fp8_e4m3), variants);
  emu::EmulatorConfig config;
  config.precision = Precision::fp8_e4m3;
  config.tiles = {64, 64};
  config.threads = 1;
  AttentionOutputs const out = emu::emulate(in, recipe, config);
  return compute_metrics(out.o, reference_attention(in, {1}).o).rmse;
}

// N(0, 1) values rounded to bf16 (the values an FP8 kernel's inputs hold).
std::vector<double> gaussian_bf16(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<double> normal;
  std::vector<double> x(n);
  for (double& e : x) e = double(round_to(Precision::bf16, float(normal(rng))));
  return x;
}

Fp8Variants only(Fp8Variant v) {
  return Fp8Variants{}.with(v);
}

}  // namespace

TEST_CASE("FP8 variants: reverse_keys and block_p_scale undo the P collapse under an attention sink",
          "[emulator][fp8]") {
  AttentionInputs const in = sink_problem();
  double const fa3 = o_rmse(in, {});
  double const reverse = o_rmse(in, only(Fp8Variant::reverse_keys));
  double const block_scale = o_rmse(in, only(Fp8Variant::block_p_scale));
  double const fp64_max = o_rmse(in, only(Fp8Variant::fp64_row_max));
  INFO("fa3 " << fa3 << " reverse " << reverse << " block_p_scale " << block_scale << " fp64_row_max "
              << fp64_max);
  CHECK(fa3 > 1e-3);  // the collapse is there to undo
  CHECK(reverse < fa3 / 4);
  CHECK(block_scale < fa3 / 4);
  // The control: the exponent in float64 changes the output only by fp32 roundings far below e4m3's.
  CHECK(std::fabs(fp64_max - fa3) < 0.02 * fa3);
}

TEST_CASE("FP8 variants: rounded_p_sum makes O an exact average when every V row is the same",
          "[emulator][fp8]") {
  AttentionShape const s = one_head(64, 256, 16);
  std::mt19937 rng(3);
  AttentionInputs in{s,
                     draw(s.q_elements(), {-2, -1, 0, 1, 2}, rng),
                     draw(s.kv_elements(), {-2, -1, 0, 1, 2}, rng),
                     std::vector<double>(s.kv_elements(), 1.0),
                     {}};
  // P rounded but l summed unrounded: O = sum(round(P)) / sum(P) != 1, a few 2^-5 off.
  CHECK(o_rmse(in, {}) > 1e-3);
  CHECK(o_rmse(in, only(Fp8Variant::rounded_p_sum)) < 1e-6);
}

TEST_CASE("FP8 variants: two_term_p cuts the error of P", "[emulator][fp8]") {
  AttentionShape const s = one_head(64, 128, 16);
  std::mt19937 rng(5);
  AttentionInputs in{s,
                     draw(s.q_elements(), {-2, -1, 0, 1, 2}, rng),
                     draw(s.kv_elements(), {-2, -1, 0, 1, 2}, rng),
                     draw(s.kv_elements(), {-4, -2, -1, 0, 1, 2, 4}, rng),
                     {}};
  double const fa3 = o_rmse(in, {});
  double const two_term = o_rmse(in, only(Fp8Variant::two_term_p));
  INFO("fa3 " << fa3 << " two_term_p " << two_term);
  CHECK(two_term < fa3 / 3);
  // With the operands exact, P in bf16 leaves only bf16's 2^-9 (less than two terms' ~2^-8, more than 0).
  CHECK(o_rmse(in, only(Fp8Variant::bf16_pv)) < fa3 / 3);
}

TEST_CASE("FP8 variants: the operand variants round Q, K or V more finely and leave the others alone",
          "[emulator][fp8]") {
  AttentionShape const s = one_head(64, 64, 32);
  std::mt19937 rng(11);
  auto gaussian = [&](std::size_t n) { return gaussian_bf16(n, rng); };
  AttentionInputs const in{
      s, gaussian(s.q_elements()), gaussian(s.kv_elements()), gaussian(s.kv_elements()), {}};
  PrecisionRecipe const fa3 = recipe_for(Precision::fp8_e4m3);
  QuantizedOperands const base = quantize_operands(in, fa3);
  // Largest relative error of a quantised tensor over elements above 1/16 of the largest magnitude.
  auto worst = [](std::vector<float> const& codes, std::vector<float> const& descale,
                  std::vector<double> const& x, std::size_t d) {
    double amax = 0, out = 0;
    for (double e : x) amax = std::max(amax, std::fabs(e));
    for (std::size_t i = 0; i < x.size(); ++i)
      if (std::fabs(x[i]) > amax / 16)
        out = std::max(out, std::fabs(double(codes[i]) * double(descale[i / d]) - x[i]) / std::fabs(x[i]));
    return out;
  };
  auto const d = std::size_t(s.head_dim);
  CHECK(worst(base.q, base.q_descale, in.q, d) > 0.02);  // e4m3: up to 2^-4
  auto ops = [&](Fp8Variant v) { return quantize_operands(in, with_fp8_variants(fa3, only(v))); };

  QuantizedOperands const tq = ops(Fp8Variant::two_term_q);
  CHECK(worst(tq.q, tq.q_descale, in.q, d) < 0.005);  // ~2^-8
  CHECK(tq.k == base.k);
  CHECK(tq.v == base.v);
  QuantizedOperands const tv = ops(Fp8Variant::two_term_v);
  CHECK(worst(tv.v, tv.v_descale, in.v, d) < 0.005);
  CHECK(tv.q == base.q);
  QuantizedOperands const bqk = ops(Fp8Variant::bf16_qk);  // bf16 inputs: exact
  CHECK(worst(bqk.q, bqk.q_descale, in.q, d) == 0.0);
  CHECK(worst(bqk.k, bqk.k_descale, in.k, d) == 0.0);
  CHECK(bqk.v == base.v);
  QuantizedOperands const bpv = ops(Fp8Variant::bf16_pv);
  CHECK(worst(bpv.v, bpv.v_descale, in.v, d) == 0.0);
  CHECK(bpv.q == base.q);
  CHECK(with_fp8_variants(fa3, only(Fp8Variant::bf16_pv)).probabilities == Precision::bf16);
}

TEST_CASE("FP8 variants: bf16_pv walked last to first (fa3_sm90's kPvBf16) errs less on FA3's outliers",
          "[emulator][fp8]") {
  // What fa3_sm90 computes with and without kPvBf16: FlashAttention-3's recipe (e4m3, per block,
  // incoherent), key blocks last to first (reverse_keys), the kernel's 128-key blocks; on the outlier recipe
  // the error sits in V's e4m3 rounding (experiments/fp8_error_analysis), which bf16 P V removes.
  FamilyRequest r;
  r.shape = one_head(256, 1024, 128);
  r.seed = 1;
  r.precision = Precision::bf16;
  r.with_backward = false;
  AttentionInputs const in = generate_family(InputFamily::fa3_outliers, r).inputs;
  auto rmse = [&](Fp8Variants variants) {
    PrecisionRecipe recipe = recipe_for(Precision::fp8_e4m3);
    recipe.fp8_scaling = Fp8Scaling::per_block;
    recipe.fp8_block_rows = 128;
    recipe.incoherent = true;
    recipe.incoherent_seed = 1;
    recipe = with_fp8_variants(recipe, variants.with(Fp8Variant::reverse_keys));
    emu::EmulatorConfig config;
    config.precision = Precision::fp8_e4m3;
    config.tiles = {128, 128};
    config.threads = 1;
    return compute_metrics(emu::emulate(in, recipe, config).o, reference_attention(in, {1}).o).rmse;
  };
  double const plain = rmse({}), bf16 = rmse(only(Fp8Variant::bf16_pv));
  INFO("reverse_keys " << plain << ", reverse_keys+bf16_pv " << bf16);
  CHECK(bf16 < 0.9 * plain);
}

TEST_CASE("FP8 variants: names, combinations and the FA-1 refusal", "[emulator][fp8]") {
  for (Fp8Variant v : kAllFp8Variants) CHECK(parse_fp8_variants(name(v)) == only(v));
  Fp8Variants const both = only(Fp8Variant::two_term_v).with(Fp8Variant::two_term_q);
  CHECK(name(both) == "two_term_q+two_term_v");
  CHECK(parse_fp8_variants("two_term_v+two_term_q") == both);
  CHECK(parse_fp8_variants("fa3") == Fp8Variants{});
  CHECK_FALSE(parse_fp8_variants("two_term_q+two_term_q"));
  CHECK_FALSE(parse_fp8_variants("two_term_k"));
  CHECK_FALSE(parse_fp8_variants(""));
  CHECK_FALSE(parse_fp8_variants("two_term_q+"));
  emu::EmulatorConfig config;
  config.precision = Precision::fp8_e4m3;
  config.loop_order = emu::LoopOrder::fa1;
  AttentionInputs const in = sink_problem();
  CHECK_THROWS_AS(emu::emulate(in, with_fp8_variants(recipe_for(Precision::fp8_e4m3), both), config),
                  std::invalid_argument);
}

TEST_CASE("FP8 variants: rotate_v rotates V and the epilogue rotates O back", "[emulator][fp8]") {
  AttentionShape const s = one_head(64, 128, 32);
  std::mt19937 rng(13);
  auto gaussian = [&](std::size_t n) { return gaussian_bf16(n, rng); };
  AttentionInputs const in{
      s, gaussian(s.q_elements()), gaussian(s.kv_elements()), gaussian(s.kv_elements()), {}};
  PrecisionRecipe const fa3 = recipe_for(Precision::fp8_e4m3);
  Fp8Variants const rotate = only(Fp8Variant::rotate_v);
  QuantizedOperands const base = quantize_operands(in, fa3);
  QuantizedOperands const rotated = quantize_operands(in, with_fp8_variants(fa3, rotate));
  REQUIRE(rotated.v_transform);
  CHECK(rotated.v != base.v);  // V's codes are those of V M
  CHECK(rotated.q == base.q);
  // O is P V, not P V M: the error stays that of an FP8 forward (|O M - O| would be of the size of O).
  double const plain = o_rmse(in, {});
  double const with_rotation = o_rmse(in, rotate);
  INFO("fa3 " << plain << " rotate_v " << with_rotation);
  CHECK(with_rotation < 2 * plain);
  // A forward variant: the backward refuses it rather than use V M as V.
  emu::EmulatorConfig config;
  config.precision = Precision::fp8_e4m3;
  AttentionInputs with_do = in;
  with_do.d_o = gaussian(s.q_elements());
  CHECK_THROWS_AS(emu::emulate(with_do, with_fp8_variants(fa3, rotate), config), std::invalid_argument);
}
