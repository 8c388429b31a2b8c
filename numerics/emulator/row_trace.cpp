#include "numerics/emulator/row_trace.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "numerics/emulator/forward_kernels.hpp"
#include "numerics/emulator/online_softmax_row.hpp"
#include "numerics/emulator/prepared_problem.hpp"

namespace fl::numerics::emulator {

namespace {

template <class Real>
RowTrace trace(HeadView const& head, common::AttentionShape const& shape, PrecisionRecipe const& recipe,
               EmulatorConfig const& config, int r) {
  MutantSet const mut = config.mutants;
  BasicSoftmaxConstants<Real> const c = make_constants<Real>(shape, recipe, mut);
  auto const d = static_cast<std::size_t>(shape.head_dim);
  int const bn = config.tiles.block_n;
  RowTrace out;
  // The row alone is its query tile (kBlockM = 1): it visits the key blocks its own causal limit needs.
  int const key_blocks = key_blocks_for_query_tile(shape, bn, r + 1);
  if (key_blocks <= 0) {
    out.output.assign(d, 0.0);
    out.lse = kMaskedRowLse;
    return out;
  }
  Real m = initial_max<Real>(mut);
  Real l = 0;
  std::vector<Real> acc(d, Real(0));
  std::vector<Real> s(static_cast<std::size_t>(bn));
  std::vector<Real> p(static_cast<std::size_t>(bn));
  bool const reversed = config.key_order == KeyOrder::last_to_first;
  for (int step = 0; step < key_blocks; ++step) {
    int const kb = reversed ? key_blocks - 1 - step : step;
    int const c0 = kb * bn;
    score_tile(head, shape, mut, r, r + 1, c0, bn, s.data());
    KeyBlockValues const values{head.v + static_cast<std::size_t>(c0) * d, head.v_descale + c0,
                                shape.seqlen_k - c0};
    RowFoldStep<Real> const done = fold_row(s.data(), 0, bn, values, d, c, mut, m, l, acc.data(), p.data());
    BlockState state;
    state.block = kb;
    state.first_key = c0;
    state.end_key = std::min(shape.seqlen_k, c0 + bn);
    state.scores.assign(s.begin(), s.end());  // padding past N_k included (-inf unless tail-unmasked)
    state.m = m;
    state.alpha = done.alpha;
    state.l = l;
    Real const inv = accumulator_is_normalised(mut) ? Real(1) : guarded_inverse(l);
    for (Real a : acc) state.output_so_far.push_back(a * inv);
    out.blocks.push_back(std::move(state));
  }
  if constexpr (std::is_same_v<Real, float>) {
    // The epilogue as the emulator writes it (rounding to the output precision), into a one-row view.
    std::vector<float> o(d);
    float lse = 0, row_max = 0;
    ForwardParams const params{shape, c, mut, config.tiles, config.key_order, 1, nullptr};
    write_row(HeadOutput{o.data(), &lse, &row_max}, params, 0, acc.data(), m, l,
              accumulator_is_normalised(mut));
    out.output.assign(o.begin(), o.end());
    out.lse = lse;
  } else {
    Real const inv = accumulator_is_normalised(mut) ? Real(1) : guarded_inverse(l);
    for (Real a : acc) out.output.push_back(a * inv);
    out.lse = row_lse(m, l, c, mut);
  }
  return out;
}

}  // namespace

RowTrace trace_row(QuantizedOperands const& ops, PrecisionRecipe const& recipe, EmulatorConfig const& config,
                   std::size_t row, TraceArithmetic arithmetic) {
  if (config.loop_order != LoopOrder::fa2 || config.warps_n != 1)
    throw std::invalid_argument("trace_row follows the FA-2 loop order with one warp column");
  if (ops.v_transform) throw std::invalid_argument("trace_row does not follow the rotate_v variant");
  PreparedProblem const prepared(ops, config);
  common::AttentionShape const& shape = ops.shape;
  if (row >= shape.lse_elements())
    throw std::invalid_argument("row " + std::to_string(row) + " outside 0.." +
                                std::to_string(shape.lse_elements() - 1));
  auto const nq = static_cast<std::size_t>(shape.seqlen_q);
  HeadView const head = prepared.head(row / nq);
  int const r = static_cast<int>(row % nq);
  return arithmetic == TraceArithmetic::fp32 ? trace<float>(head, shape, recipe, config, r)
                                             : trace<double>(head, shape, recipe, config, r);
}

}  // namespace fl::numerics::emulator
