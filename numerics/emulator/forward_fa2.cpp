// FlashAttention-2 forward: outer loop over query tiles (one per thread block), inner loop over key blocks,
// online softmax with the normalisation deferred to the end.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "numerics/emulator/forward_kernels.hpp"
#include "numerics/emulator/online_softmax_row.hpp"
#include "numerics/precision.hpp"

namespace fl::numerics::emulator {

namespace {

// The running state of one warp column (all of the block's columns when warps_n = 1): per row m, l and the
// unnormalised accumulator.
struct PartialState {
  std::vector<float> m, l, acc;
};

// One key block folded into one warp column's state: columns [col_begin, col_end) of the block's scores s
// (rows x block_n, masked with -inf), key c0 + j for column j.
void fold_block(HeadView const& head, ForwardParams const& params, float const* s, int rows, int c0,
                int col_begin, int col_end, PartialState& state, std::vector<float>& p) {
  int const bn = params.tiles.block_n;
  auto const d = static_cast<std::size_t>(params.shape.head_dim);
  KeyBlockValues const values{head.v + static_cast<std::size_t>(c0) * d, head.v_descale + c0,
                              params.shape.seqlen_k - c0};
  for (int r = 0; r < rows; ++r)
    fold_row(s + static_cast<std::size_t>(r) * bn, col_begin, col_end, values, d, params.constants,
             params.mutants, state.m[r], state.l[r], state.acc.data() + static_cast<std::size_t>(r) * d,
             p.data());
}

// The warp columns of one row merged as fa2_sm80 merges them through shared memory: the common max m
// (guarded), l = sum l_w 2^(m_w - m), O = sum O_w 2^(m_w - m) in warp order. Writes into parts[0].
void merge_warp_columns(std::vector<PartialState>& parts, ForwardParams const& params, int rows) {
  SoftmaxConstants const& c = params.constants;
  MutantSet const mut = params.mutants;
  auto const d = static_cast<std::size_t>(params.shape.head_dim);
  std::vector<float> merged(d);
  for (int r = 0; r < rows; ++r) {
    float m_all = kNegInf;
    for (PartialState const& w : parts) m_all = std::max(m_all, w.m[r]);
    float const m_all_scaled = guard_max(m_all, mut) * c.scale_log2;
    float l_all = 0.0f;
    std::fill(merged.begin(), merged.end(), 0.0f);
    for (PartialState const& w : parts) {
      float const factor = softmax_exp2(w.m[r] * c.scale_log2 - m_all_scaled, mut);
      l_all += w.l[r] * factor;
      float const* arow = w.acc.data() + static_cast<std::size_t>(r) * d;
      for (std::size_t e = 0; e < d; ++e) merged[e] += arow[e] * factor;
    }
    PartialState& first = parts.front();
    first.m[r] = m_all;
    first.l[r] = l_all;
    std::copy(merged.begin(), merged.end(), first.acc.begin() + static_cast<std::ptrdiff_t>(r * d));
  }
}

}  // namespace

template <class Real>
RowFoldStep<Real> fold_row(Real const* srow, int col_begin, int col_end, KeyBlockValues const& values,
                           std::size_t head_dim, BasicSoftmaxConstants<Real> const& c, MutantSet mutants,
                           Real& m, Real& l, Real* acc, Real* p) {
  MutantSet const mut = mutants;
  std::size_t const d = head_dim;
  int const valid_end = std::min(col_end, values.valid_keys);  // zero-padded V beyond: adds nothing
  Real const m_old = m;
  Real const block_max = *std::max_element(srow + col_begin, srow + col_end);
  Real const m_new = std::max(m_old, block_max);
  Real const m_new_scaled = guard_max(m_new, mut) * c.scale_log2;
  // FA_MUTANT_STALE_MAX: the exponent uses the max from before this block.
  Real const max_for_p = guard_max(mut.on(MutantId::stale_max) ? m_old : m_new, mut);
  Real const m_for_p = mut.on(MutantId::stale_max) ? max_for_p * c.scale_log2 : m_new_scaled;
  Real const alpha = softmax_exp2(m_old * c.scale_log2 - m_new_scaled, mut);
  // block_p_scale: P of this block computed 2^shift larger, its products scaled back by 2^-shift (exact).
  Real const shift = block_p_shift(c, m_for_p, block_max);
  Real const unshift = std::exp2(-shift);
  bool const exponent_in_fp64 = c.fp8_variants.has(Fp8Variant::fp64_row_max);
  bool const sum_rounded_p = c.fp8_variants.has(Fp8Variant::rounded_p_sum);
  Real row_sum = 0;
  for (int j = col_begin; j < col_end; ++j) {
    if (exponent_in_fp64) {  // a control: no mutant acts on this path
      double const scale_log2 = double(c.scale_log2);
      p[j] = Real(std::exp2(double(srow[j]) * scale_log2 - double(max_for_p) * scale_log2)) * c.p_scale;
    } else {
      p[j] = softmax_exp2(p_exponent(srow[j], c.scale_log2, m_for_p) + shift, mut) * c.p_scale;
    }
    // l sums P before it is rounded, as the kernels do; rounded_p_sum sums what P.V multiplies.
    row_sum += sum_rounded_p ? p_as_multiplied(c, p[j]) : p[j];
  }
  row_sum *= unshift;
  l = mut.on(MutantId::unrescaled_l) ? l + row_sum : l * alpha + row_sum;  // FA_MUTANT_UNRESCALED_L
  if (!mut.on(MutantId::unrescaled_o)) {                                   // FA_MUTANT_UNRESCALED_O
    for (std::size_t e = 0; e < d; ++e) acc[e] *= alpha;
  }
  for (int j = col_begin; j < valid_end; ++j) {
    Real const pr = p_as_multiplied(c, p[j]);
    if (pr == Real(0)) continue;
    float const* vrow = values.v + static_cast<std::size_t>(j) * d;
    Real const weight = pr * unshift * Real(values.v_descale[j]);
    for (std::size_t e = 0; e < d; ++e) acc[e] += weight * Real(vrow[e]);
  }
  m = m_new;
  if (accumulator_is_normalised(mut)) {  // FA_MUTANT_NORMALIZE_IN_LOOP (and the epilogue no longer divides)
    Real const inv = guarded_inverse(l);
    for (std::size_t e = 0; e < d; ++e) acc[e] *= inv;
  }
  return RowFoldStep<Real>{m_old, m_new, alpha};
}
template RowFoldStep<float> fold_row<float>(float const*, int, int, KeyBlockValues const&, std::size_t,
                                            SoftmaxConstants const&, MutantSet, float&, float&, float*,
                                            float*);
template RowFoldStep<double> fold_row<double>(double const*, int, int, KeyBlockValues const&, std::size_t,
                                              BasicSoftmaxConstants<double> const&, MutantSet, double&,
                                              double&, double*, double*);

void fa2_forward_query_tile(HeadView const& head, HeadOutput const& out, ForwardParams const& params, int r0,
                            int r1) {
  common::AttentionShape const& shape = params.shape;
  MutantSet const mut = params.mutants;
  int const bn = params.tiles.block_n;
  auto const d = static_cast<std::size_t>(shape.head_dim);
  int const rows = r1 - r0;
  int const key_blocks = key_blocks_for_query_tile(shape, bn, r1);
  if (key_blocks <= 0) {
    write_masked_rows(out, params, r0, r1);
    return;
  }
  auto const n_rows = static_cast<std::size_t>(rows);
  int const warps_n = params.warps_n;
  int const warp_cols = bn / warps_n;
  std::vector<PartialState> parts(
      static_cast<std::size_t>(warps_n),
      PartialState{std::vector<float>(n_rows, initial_max(mut)), std::vector<float>(n_rows, 0.0f),
                   std::vector<float>(n_rows * d, 0.0f)});
  std::vector<float> s(n_rows * static_cast<std::size_t>(bn));
  std::vector<float> p(static_cast<std::size_t>(bn));
  bool const reversed = params.key_order == KeyOrder::last_to_first ||
                        params.constants.fp8_variants.has(Fp8Variant::reverse_keys);
  for (int step = 0; step < key_blocks; ++step) {
    int const kb = reversed ? key_blocks - 1 - step : step;
    int const c0 = kb * bn;
    score_tile(head, shape, mut, r0, r1, c0, bn, s.data());
    for (int w = 0; w < warps_n; ++w)
      fold_block(head, params, s.data(), rows, c0, w * warp_cols, (w + 1) * warp_cols,
                 parts[static_cast<std::size_t>(w)], p);
  }
  if (warps_n > 1) merge_warp_columns(parts, params, rows);
  PartialState const& final_state = parts.front();
  for (int r = 0; r < rows; ++r)
    write_row(out, params, r0 + r, final_state.acc.data() + static_cast<std::size_t>(r) * d, final_state.m[r],
              final_state.l[r], accumulator_is_normalised(mut));
}

void write_row(HeadOutput const& out, ForwardParams const& params, int row, float const* acc, float m,
               float l, bool already_normalised) {
  auto const d = static_cast<std::size_t>(params.shape.head_dim);
  float const inv = already_normalised ? 1.0f : guarded_inverse(l);
  float* orow = out.o + static_cast<std::size_t>(row) * d;
  if (params.v_rotation) {
    // rotate_v: the row is O M; O = (O M) M^T, in the fp32 values before the output rounding.
    std::vector<double> rotated(d);
    for (std::size_t e = 0; e < d; ++e) rotated[e] = double(acc[e] * inv);
    apply_incoherent_inverse(*params.v_rotation, rotated);
    for (std::size_t e = 0; e < d; ++e) orow[e] = round_to(params.constants.out_precision, float(rotated[e]));
  } else {
    for (std::size_t e = 0; e < d; ++e) orow[e] = round_to(params.constants.out_precision, acc[e] * inv);
  }
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
