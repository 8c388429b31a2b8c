// FlashAttention-2 forward: outer loop over query tiles (one per thread block), inner loop over key blocks,
// online softmax with the normalisation deferred to the end.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "numerics/emulator/forward_kernels.hpp"

namespace fl::numerics::emulator {

void fa2_forward_query_tile(HeadView const& head, HeadOutput const& out, ForwardParams const& params, int r0,
                            int r1) {
  AttentionShape const& shape = params.shape;
  SoftmaxConstants const& c = params.constants;
  MutantSet const mut = params.mutants;
  int const bn = params.tiles.block_n;
  auto const d = static_cast<std::size_t>(shape.head_dim);
  int const rows = r1 - r0;
  int const key_blocks = key_blocks_for_query_tile(shape, bn, r1);
  if (key_blocks <= 0) {
    write_masked_rows(out, params, r0, r1);
    return;
  }
  std::vector<float> m(static_cast<std::size_t>(rows), initial_max(mut));
  std::vector<float> l(static_cast<std::size_t>(rows), 0.0f);
  std::vector<float> acc(static_cast<std::size_t>(rows) * d, 0.0f);
  std::vector<float> s(static_cast<std::size_t>(rows) * static_cast<std::size_t>(bn));
  std::vector<float> p(static_cast<std::size_t>(bn));
  bool const normalise_each_block = mut.on(MutantId::normalize_in_loop);

  for (int kb = 0; kb < key_blocks; ++kb) {
    int const c0 = kb * bn;
    int const valid_keys = std::min(bn, shape.seqlen_k - c0);  // zero-padded V beyond: adds nothing to P.V
    score_tile(head, shape, mut, r0, r1, c0, bn, s.data());
    for (int r = 0; r < rows; ++r) {
      float const* srow = s.data() + static_cast<std::size_t>(r) * bn;
      float* arow = acc.data() + static_cast<std::size_t>(r) * d;
      float const m_old = m[r];
      float const m_new = std::max(m_old, *std::max_element(srow, srow + bn));
      float const m_new_scaled = guard_max(m_new, mut) * c.scale_log2;
      // FA_MUTANT_STALE_MAX: the exponent uses the max from before this block.
      float const m_for_p = mut.on(MutantId::stale_max) ? guard_max(m_old, mut) * c.scale_log2 : m_new_scaled;
      float const alpha = softmax_exp2(m_old * c.scale_log2 - m_new_scaled, mut);
      float row_sum = 0.0f;
      for (int j = 0; j < bn; ++j) {
        p[j] = softmax_exp2(p_exponent(srow[j], c.scale_log2, m_for_p), mut) * c.p_scale;
        row_sum += p[j];  // l sums P before it is rounded, as the kernels do
      }
      l[r] =
          mut.on(MutantId::unrescaled_l) ? l[r] + row_sum : l[r] * alpha + row_sum;  // FA_MUTANT_UNRESCALED_L
      if (!mut.on(MutantId::unrescaled_o)) {                                         // FA_MUTANT_UNRESCALED_O
        for (std::size_t e = 0; e < d; ++e) arow[e] *= alpha;
      }
      for (int j = 0; j < valid_keys; ++j) {
        float const pr = round_to(c.p_precision, p[j]);
        if (pr == 0.0f) continue;
        float const* vrow = head.v + static_cast<std::size_t>(c0 + j) * d;
        float const weight = pr * head.v_descale[c0 + j];
        for (std::size_t e = 0; e < d; ++e) arow[e] += weight * vrow[e];
      }
      m[r] = m_new;
      if (normalise_each_block) {  // FA_MUTANT_NORMALIZE_IN_LOOP (and the epilogue no longer divides)
        float const inv = guarded_inverse(l[r]);
        for (std::size_t e = 0; e < d; ++e) arow[e] *= inv;
      }
    }
  }
  for (int r = 0; r < rows; ++r)
    write_row(out, params, r0 + r, acc.data() + static_cast<std::size_t>(r) * d, m[r], l[r],
              normalise_each_block);
}

void write_row(HeadOutput const& out, ForwardParams const& params, int row, float const* acc, float m,
               float l, bool already_normalised) {
  auto const d = static_cast<std::size_t>(params.shape.head_dim);
  float const inv = already_normalised ? 1.0f : guarded_inverse(l);
  float* orow = out.o + static_cast<std::size_t>(row) * d;
  for (std::size_t e = 0; e < d; ++e) orow[e] = round_to(params.constants.out_precision, acc[e] * inv);
  out.lse[row] = row_lse(m, l, params.constants, params.mutants);
  out.row_max[row] = m;
}

void write_masked_rows(HeadOutput const& out, ForwardParams const& params, int r0, int r1) {
  auto const d = static_cast<std::size_t>(params.shape.head_dim);
  for (int r = r0; r < r1; ++r) {
    std::fill_n(out.o + static_cast<std::size_t>(r) * d, d, 0.0f);
    out.lse[r] = kMaskedRowLse;
    out.row_max[r] = kNegInf;
  }
}

}  // namespace fl::numerics::emulator
