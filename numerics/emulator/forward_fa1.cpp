// FlashAttention-1 forward (Algorithm 1 of the paper): outer loop over key/value blocks, inner loop over
// query tiles. Each step folds one tile into the row's state with the tile's own max m~, and O is kept
// normalised between steps: O_new = (alpha * l_old * O_old + beta * P~V) / l_new with
// alpha = exp(m_old - m_new), beta = exp(m~ - m_new), l_new = alpha * l_old + beta * l~.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "numerics/emulator/forward_kernels.hpp"

#include "numerics/precision.hpp"

namespace fl::numerics::emulator {

namespace {

bool tile_has_selected_row(std::span<std::uint8_t const> selected, int r0, int r1) {
  if (selected.empty()) return true;
  return std::any_of(selected.begin() + r0, selected.begin() + r1, [](std::uint8_t f) { return f != 0; });
}

}  // namespace

void fa1_forward_head(HeadView const& head, HeadOutput const& out, ForwardParams const& params,
                      std::span<std::uint8_t const> selected) {
  common::AttentionShape const& shape = params.shape;
  SoftmaxConstants const& c = params.constants;
  MutantSet const mut = params.mutants;
  int const bm = params.tiles.block_m;
  int const bn = params.tiles.block_n;
  auto const d = static_cast<std::size_t>(shape.head_dim);
  auto const nq = static_cast<std::size_t>(shape.seqlen_q);

  // Per-row state kept across outer steps (FlashAttention-1 keeps it in global memory, O in fp32).
  std::vector<float> o(nq * d, 0.0f);
  std::vector<float> m(nq, initial_max(mut));
  std::vector<float> l(nq, 0.0f);
  std::vector<float> s(static_cast<std::size_t>(bm) * static_cast<std::size_t>(bn));
  std::vector<float> p(static_cast<std::size_t>(bn));
  std::vector<float> pv(d);
  std::vector<std::uint8_t> visited(nq, 0);  // rows of tiles that saw at least one key block

  int const key_blocks = (shape.seqlen_k + bn - 1) / bn;
  for (int kb = 0; kb < key_blocks; ++kb) {
    int const c0 = kb * bn;
    int const valid_keys = std::min(bn, shape.seqlen_k - c0);
    for (int r0 = 0; r0 < shape.seqlen_q; r0 += bm) {
      int const r1 = std::min(shape.seqlen_q, r0 + bm);
      if (tile_fully_masked(shape, r1, c0) || !tile_has_selected_row(selected, r0, r1)) continue;
      score_tile(head, shape, mut, r0, r1, c0, bn, s.data());
      for (int r = r0; r < r1; ++r) {
        visited[static_cast<std::size_t>(r)] = 1;
        float const* srow = s.data() + static_cast<std::size_t>(r - r0) * bn;
        float* orow = o.data() + static_cast<std::size_t>(r) * d;
        float const m_tile = *std::max_element(srow, srow + bn);
        float const m_tile_scaled = guard_max(m_tile, mut) * c.scale_log2;
        float l_tile = 0.0f;
        for (int j = 0; j < bn; ++j) {
          p[j] = softmax_exp2(p_exponent(srow[j], c.scale_log2, m_tile_scaled), mut) * c.p_scale;
          l_tile += p[j];
        }
        std::fill(pv.begin(), pv.end(), 0.0f);
        for (int j = 0; j < valid_keys; ++j) {
          float const pr = round_to(c.p_precision, p[j]);
          if (pr == 0.0f) continue;
          float const* vrow = head.v + static_cast<std::size_t>(c0 + j) * d;
          float const weight = pr * head.v_descale[c0 + j];
          for (std::size_t e = 0; e < d; ++e) pv[e] += weight * vrow[e];
        }
        float const m_old = m[static_cast<std::size_t>(r)];
        float const l_old = l[static_cast<std::size_t>(r)];
        float const m_new = std::max(m_old, m_tile);
        float const m_new_scaled = guard_max(m_new, mut) * c.scale_log2;
        float const alpha = softmax_exp2(m_old * c.scale_log2 - m_new_scaled, mut);
        // FA_MUTANT_STALE_MAX: the tile's P is brought to the max from before this block.
        float const m_target =
            mut.on(MutantId::stale_max) ? guard_max(m_old, mut) * c.scale_log2 : m_new_scaled;
        // From the raw tile max: a tile with no visible key for this row (m~ = -inf) gets beta = 0, not
        // exp2(0 - m_new), which overflows for a row whose running max is very negative.
        float const beta = softmax_exp2(m_tile * c.scale_log2 - m_target, mut);
        float const l_new =
            (mut.on(MutantId::unrescaled_l) ? l_old : alpha * l_old)  // FA_MUTANT_UNRESCALED_L
            + beta * l_tile;
        // The weight of the stored (normalised) O: alpha * l_old. FA_MUTANT_UNRESCALED_O drops alpha;
        // FA_MUTANT_NORMALIZE_IN_LOOP treats the normalised O as an unnormalised accumulator (drops l_old),
        // which is what dividing by l after every block does in the FA-2 order.
        float const old_weight = mut.on(MutantId::unrescaled_o)        ? l_old
                                 : mut.on(MutantId::normalize_in_loop) ? alpha
                                                                       : alpha * l_old;
        float const inv = guarded_inverse(l_new);
        for (std::size_t e = 0; e < d; ++e) orow[e] = (old_weight * orow[e] + beta * pv[e]) * inv;
        m[static_cast<std::size_t>(r)] = m_new;
        l[static_cast<std::size_t>(r)] = l_new;
      }
    }
  }
  for (int r = 0; r < shape.seqlen_q; ++r) {
    auto const ur = static_cast<std::size_t>(r);
    if (!selected.empty() &&
        !tile_has_selected_row(selected, r - r % bm, std::min(shape.seqlen_q, r - r % bm + bm)))
      continue;
    if (!visited[ur]) {
      write_masked_rows(out, params, r, r + 1);
      continue;
    }
    write_row(out, params, r, o.data() + ur * d, m[ur], l[ur], /*already_normalised=*/true);
  }
}

}  // namespace fl::numerics::emulator
