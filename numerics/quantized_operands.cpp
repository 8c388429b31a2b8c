#include "numerics/quantized_operands.hpp"

#include "common/parallel_for.hpp"
#include "numerics/precision.hpp"

namespace fl::numerics {

namespace {

// One tensor: rounded (fp16/bf16/fp32) or FP8-quantised, with per-row descales. two_term: each FP8 code
// plus its residual in FP8 (scaled by kTwoTermLowScale into e4m3's range and back), the value two products
// of the hi and the lo tensor sum to.
void quantize_tensor(std::vector<double> const& x, int matrices, int rows, int cols, PrecisionRecipe const& r,
                     std::vector<float>& values, std::vector<float>& descale, bool two_term = false) {
  std::size_t const n_rows = std::size_t(matrices) * std::size_t(rows);
  if (!is_fp8(r.operands)) {
    values.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) values[i] = round_to(r.operands, float(x[i]));
    descale.assign(n_rows, 1.0f);
    return;
  }
  Fp8Tensor t = quantize_fp8(x, matrices, rows, cols, r.operands, r.fp8_scaling, r.fp8_block_rows);
  descale.resize(n_rows);
  for (std::size_t row = 0; row < n_rows; ++row) descale[row] = t.descale_of_row(row);
  values = std::move(t.codes);
  if (!two_term) return;
  auto const n_cols = std::size_t(cols);
  float const lo_scale = float(kTwoTermLowScale);
  for (std::size_t i = 0; i < values.size(); ++i) {
    double const residual = x[i] * double(t.scales[t.block_of_row(i / n_cols)]) - double(values[i]);
    values[i] += round_to(r.operands, float(residual) * lo_scale) / lo_scale;
  }
}

}  // namespace

QuantizedOperands quantize_operands(AttentionInputs const& in, PrecisionRecipe const& recipe_in) {
  common::AttentionShape const& s = in.shape;
  bool const fp8 = is_fp8(recipe_in.operands);
  Fp8Variants const variants = fp8 ? recipe_in.fp8_variants : Fp8Variants{};
  // bf16_qk: Q and K meet in a bf16 product (numerics/fp8_variants.hpp), rounded to bf16 only.
  PrecisionRecipe recipe = recipe_in;
  if (variants.has(Fp8Variant::bf16_qk)) recipe.operands = common::Precision::bf16;
  bool const two_term_q = variants.has(Fp8Variant::two_term_q);
  QuantizedOperands out;
  out.shape = s;
  int const q_mats = s.batch * s.heads_q;
  int const kv_mats = s.batch * s.heads_kv;
  std::vector<double> rotated_q, rotated_k, rotated_v;
  if (fp8 && recipe.incoherent) {
    IncoherentTransform t = make_incoherent_transform(s.head_dim, recipe.incoherent_seed);
    rotated_q = in.q;
    rotated_k = in.k;
    apply_incoherent(t, rotated_q);
    apply_incoherent(t, rotated_k);
    out.transform = std::move(t);
  }
  // bf16_pv: V meets P in a bf16 product, so it is rounded to bf16 only.
  PrecisionRecipe v_recipe = recipe_in;
  if (variants.has(Fp8Variant::bf16_pv)) v_recipe.operands = common::Precision::bf16;
  if (variants.has(Fp8Variant::rotate_v)) {
    // The same transform as Q and K's (an orthogonal M of its own would do as well).
    IncoherentTransform t = make_incoherent_transform(s.head_dim, recipe.incoherent_seed);
    rotated_v = in.v;
    apply_incoherent(t, rotated_v);
    out.v_transform = std::move(t);
  }
  // Q, K and V are quantised side by side, each alone as before (the same bits): fa-tune quantises a
  // headline FP8 problem once, 2.3 s of one core of this machine at b4 h32 n4096 d64; small ones (the
  // emulators', many times) in turn.
  common::parallel_for(3, common::elementwise_threads(in.q.size()), [&](std::size_t begin, std::size_t end) {
    for (std::size_t tensor = begin; tensor < end; ++tensor)
      if (tensor == 0)
        quantize_tensor(out.transform ? rotated_q : in.q, q_mats, s.seqlen_q, s.head_dim, recipe, out.q,
                        out.q_descale, two_term_q);
      else if (tensor == 1)
        quantize_tensor(out.transform ? rotated_k : in.k, kv_mats, s.seqlen_k, s.head_dim, recipe, out.k,
                        out.k_descale);
      else
        quantize_tensor(out.v_transform ? rotated_v : in.v, kv_mats, s.seqlen_k, s.head_dim, v_recipe, out.v,
                        out.v_descale, variants.has(Fp8Variant::two_term_v));
  });
  if (in.has_backward())
    quantize_tensor(in.d_o, q_mats, s.seqlen_q, s.head_dim, recipe_in, out.d_o, out.d_o_descale);
  return out;
}

}  // namespace fl::numerics
