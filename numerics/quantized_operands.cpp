#include "numerics/quantized_operands.hpp"

namespace fl::numerics {

namespace {

// One tensor: rounded (fp16/bf16/fp32) or FP8-quantised, with per-row descales.
void quantize_tensor(std::vector<double> const& x, int matrices, int rows, int cols, PrecisionRecipe const& r,
                     std::vector<float>& values, std::vector<float>& descale) {
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
}

}  // namespace

QuantizedOperands quantize_operands(AttentionInputs const& in, PrecisionRecipe const& recipe) {
  AttentionShape const& s = in.shape;
  QuantizedOperands out;
  out.shape = s;
  int const q_mats = s.batch * s.heads_q;
  int const kv_mats = s.batch * s.heads_kv;
  if (is_fp8(recipe.operands) && recipe.incoherent) {
    IncoherentTransform t = make_incoherent_transform(s.head_dim, recipe.incoherent_seed);
    std::vector<double> q = in.q;
    std::vector<double> k = in.k;
    apply_incoherent(t, q);
    apply_incoherent(t, k);
    quantize_tensor(q, q_mats, s.seqlen_q, s.head_dim, recipe, out.q, out.q_descale);
    quantize_tensor(k, kv_mats, s.seqlen_k, s.head_dim, recipe, out.k, out.k_descale);
    out.transform = std::move(t);
  } else {
    quantize_tensor(in.q, q_mats, s.seqlen_q, s.head_dim, recipe, out.q, out.q_descale);
    quantize_tensor(in.k, kv_mats, s.seqlen_k, s.head_dim, recipe, out.k, out.k_descale);
  }
  quantize_tensor(in.v, kv_mats, s.seqlen_k, s.head_dim, recipe, out.v, out.v_descale);
  if (in.has_backward())
    quantize_tensor(in.d_o, q_mats, s.seqlen_q, s.head_dim, recipe, out.d_o, out.d_o_descale);
  return out;
}

}  // namespace fl::numerics
