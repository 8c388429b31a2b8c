#include "numerics/emulator/tile_primitives.hpp"

#include <algorithm>
#include <cstddef>

#include "numerics/precision.hpp"

namespace fl::numerics::emulator {

template <class Real>
BasicSoftmaxConstants<Real> make_constants(common::AttentionShape const& shape, PrecisionRecipe const& recipe,
                                           MutantSet mutants) {
  BasicSoftmaxConstants<Real> c;
  c.softmax_scale = static_cast<Real>(shape.scale());
  // Computed in float on the host as FlashAttention does (params.scale_softmax_log2).
  c.score_scale = mutants.on(MutantId::missing_scale) ? Real(1)  // FA_MUTANT_MISSING_SCALE
                                                      : c.softmax_scale;
  c.scale_log2 = c.score_scale * log2e<Real>();
  c.p_precision = recipe.probabilities;
  c.ds_precision = recipe.score_gradients;
  c.out_precision = recipe.outputs;
  c.p_scale = static_cast<Real>(recipe.probability_scale);
  if (is_fp8(recipe.claimed)) c.fp8_variants = recipe.fp8_variants;
  if (is_fp8(recipe.probabilities) && mutants.on(MutantId::fp8_p_overflow)) {
    // FA_MUTANT_FP8_P_OVERFLOW: a P scale kOverflowFactor times the format's maximum (rounded up to a power
    // of two; e4m3: 2^15, the offset that suits fp16, not e4m3's 448): every weight above 1/64 of the row
    // maximum saturates, while l, summed in fp32 before rounding, keeps the true weights.
    constexpr float kOverflowFactor = 64.0f;
    float const max_value = static_cast<float>(max_finite(recipe.probabilities));
    c.p_scale = static_cast<Real>(std::exp2(std::ceil(std::log2(kOverflowFactor * max_value))));
  }
  return c;
}
template SoftmaxConstants make_constants<float>(common::AttentionShape const&, PrecisionRecipe const&,
                                                MutantSet);
template BasicSoftmaxConstants<double> make_constants<double>(common::AttentionShape const&,
                                                              PrecisionRecipe const&, MutantSet);

int key_blocks_for_query_tile(common::AttentionShape const& shape, int block_n, int row_end) {
  int const all = (shape.seqlen_k + block_n - 1) / block_n;
  if (!shape.causal) return all;
  // Last visible key of the tile's last row is (row_end - 1) + offset.
  long long const visible_end = std::min<long long>(shape.seqlen_k, row_end + shape.causal_offset());
  if (visible_end <= 0) return 0;
  return static_cast<int>((visible_end + block_n - 1) / block_n);
}

bool tile_fully_masked(common::AttentionShape const& shape, int row_end, int col_begin) {
  return shape.causal && col_begin > static_cast<long long>(row_end - 1) + shape.causal_offset();
}

template <class Real>
void score_tile(HeadView const& head, common::AttentionShape const& shape, MutantSet mutants, int r0, int r1,
                int c0, int block_n, Real* s) {
  auto const d = static_cast<std::size_t>(shape.head_dim);
  bool const drop_k_descale = mutants.on(MutantId::fp8_missing_descale);  // FA_MUTANT_FP8_MISSING_DESCALE
  // FA_MUTANT_TAIL_UNMASKED: keys past N_k are zero-padded in shared memory, so unmasked they score 0.
  Real const past_end_score = mutants.on(MutantId::tail_unmasked) ? Real(0) : negative_infinity<Real>();
  // FA_MUTANT_CAUSAL_DIAGONAL: the limit admits one key past the diagonal.
  long long const causal_slack = mutants.on(MutantId::causal_diagonal) ? 1 : 0;
  for (int r = r0; r < r1; ++r) {
    Real* srow = s + static_cast<std::size_t>(r - r0) * block_n;
    float const* qrow = head.q + static_cast<std::size_t>(r) * d;
    long long const last_visible = static_cast<long long>(r) + shape.causal_offset() + causal_slack;
    for (int j = 0; j < block_n; ++j) {
      int const col = c0 + j;
      // The causal limit comes first: padded keys lie past every row's diagonal, so a missing length
      // check shows only in non-causal attention (as in FlashAttention's min(N_k, row + 1 + offset)).
      if (shape.causal && col > last_visible) {
        srow[j] = negative_infinity<Real>();
        continue;
      }
      if (col >= shape.seqlen_k) {
        srow[j] = past_end_score;
        continue;
      }
      float const* krow = head.k + static_cast<std::size_t>(col) * d;
      Real dot = 0;
      for (std::size_t e = 0; e < d; ++e) dot += Real(qrow[e]) * Real(krow[e]);
      Real const descale = Real(head.q_descale[r]) * (drop_k_descale ? Real(1) : Real(head.k_descale[col]));
      srow[j] = dot * descale;
    }
  }
}
template void score_tile<float>(HeadView const&, common::AttentionShape const&, MutantSet, int, int, int, int,
                                float*);
template void score_tile<double>(HeadView const&, common::AttentionShape const&, MutantSet, int, int, int,
                                 int, double*);

common::Precision output_precision(common::Precision input) {
  return is_fp8(input) ? common::Precision::bf16 : input;
}

}  // namespace fl::numerics::emulator
