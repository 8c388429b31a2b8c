// FlashAttention-2 backward: outer loop over key blocks (one per thread block), inner loop over query tiles.
// P is recomputed from Q, K and the stored LSE; D = rowsum(dO * O) is computed once up front; dK and dV of
// a key block accumulate in fp32 over the query tiles (and over the query heads of a GQA group); dQ
// accumulates in fp32 across key blocks (atomicAdd into dq_accum on the GPU) and is scaled at the end.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include "numerics/emulator/emulator.hpp"
#include "numerics/emulator/parallel_units.hpp"
#include "numerics/emulator/prepared_problem.hpp"
#include "numerics/precision.hpp"

namespace fl::numerics::emulator {

namespace {

constexpr float kPosInf = std::numeric_limits<float>::infinity();

struct BackwardContext {
  common::AttentionShape shape;
  SoftmaxConstants constants;
  MutantSet mutants;
  TileConfig tiles;
  PreparedProblem const* prepared;
  float const* d_o;          // quantised, (B, H_q, N_q, D)
  float const* d_o_descale;  // (B, H_q, N_q)
  float const* delta;        // D, (B, H_q, N_q)
  float const* lse;          // (B, H_q, N_q)
  float const* row_max;      // (B, H_q, N_q)
};

// One key/value head of one batch entry: its dK, dV and the dQ of its query-head group.
void backward_kv_head(BackwardContext const& ctx, std::size_t b, int hk, BackwardResult& out) {
  common::AttentionShape const& shape = ctx.shape;
  SoftmaxConstants const& c = ctx.constants;
  MutantSet const mut = ctx.mutants;
  int const bm = ctx.tiles.block_m;
  int const bn = ctx.tiles.block_n;
  auto const d = static_cast<std::size_t>(shape.head_dim);
  auto const nq = static_cast<std::size_t>(shape.seqlen_q);
  auto const nk = static_cast<std::size_t>(shape.seqlen_k);
  int const group = shape.group_size();
  std::size_t const bhk = b * static_cast<std::size_t>(shape.heads_kv) + static_cast<std::size_t>(hk);

  std::vector<float> dq_accum(static_cast<std::size_t>(group) * nq * d, 0.0f);
  std::vector<float> s(static_cast<std::size_t>(bm) * static_cast<std::size_t>(bn));
  std::vector<float> dq_tile(static_cast<std::size_t>(bm) * d);
  std::vector<float> dk_acc(static_cast<std::size_t>(bn) * d);
  std::vector<float> dv_acc(static_cast<std::size_t>(bn) * d);

  int const key_blocks = (shape.seqlen_k + bn - 1) / bn;
  for (int kb = 0; kb < key_blocks; ++kb) {
    int const c0 = kb * bn;
    int const valid_keys = std::min(bn, shape.seqlen_k - c0);  // padded K, V rows are zero: no gradient
    std::fill(dk_acc.begin(), dk_acc.end(), 0.0f);
    std::fill(dv_acc.begin(), dv_acc.end(), 0.0f);
    for (int g = 0; g < group; ++g) {
      int const hq = hk * group + g;
      std::size_t const bh = b * static_cast<std::size_t>(shape.heads_q) + static_cast<std::size_t>(hq);
      HeadView const head = ctx.prepared->head(bh);
      float* dq_head = dq_accum.data() + static_cast<std::size_t>(g) * nq * d;
      for (int r0 = 0; r0 < shape.seqlen_q; r0 += bm) {
        int const r1 = std::min(shape.seqlen_q, r0 + bm);
        if (tile_fully_masked(shape, r1, c0)) continue;
        score_tile(head, shape, mut, r0, r1, c0, bn, s.data());
        std::fill(dq_tile.begin(), dq_tile.end(), 0.0f);
        for (int r = r0; r < r1; ++r) {
          std::size_t const row = bh * nq + static_cast<std::size_t>(r);
          float const* srow = s.data() + static_cast<std::size_t>(r - r0) * bn;
          float const* do_row = ctx.d_o + row * d;
          float const do_descale = ctx.d_o_descale[row];
          float const* q_row = head.q + static_cast<std::size_t>(r) * d;
          float* dq_row = dq_tile.data() + static_cast<std::size_t>(r - r0) * d;
          // A fully masked row stores LSE = -inf; as +inf (FlashAttention-2's convention) it makes P = 0.
          float const lse = ctx.lse[row] == kMaskedRowLse ? kPosInf : ctx.lse[row];
          // FA_MUTANT_BWD_P_WITHOUT_L: P = exp(S - m), the forward's unnormalised P.
          float const bias =
              mut.on(MutantId::bwd_p_without_l) ? guard_max(ctx.row_max[row], mut) * c.score_scale : lse;
          float const delta = ctx.delta[row];
          for (int j = 0; j < valid_keys; ++j) {
            // P = exp(s * scale - LSE), subtracted in natural-log units and then moved to log2:
            // FlashAttention-2 computes s * scale_log2 - LSE * log2(e), whose two roundings differ by up to
            // 2^-24 |LSE| and overflow exp2 for the huge scores of near_dtype_max; this order gives P <= 1
            // for the row maximum.
            float const scaled = srow[j] * c.score_scale;
            float const p = softmax_exp2((scaled - bias) * kLog2e, mut);
            if (p == 0.0f) continue;
            std::size_t const col = static_cast<std::size_t>(c0 + j);
            float const* k_row = head.k + col * d;
            float const* v_row = head.v + col * d;
            float const p_weight = round_probability(p, c) * do_descale;
            float* dv_row = dv_acc.data() + static_cast<std::size_t>(j) * d;
            for (std::size_t e = 0; e < d; ++e) dv_row[e] += p_weight * do_row[e];
            float dp = 0.0f;
            for (std::size_t e = 0; e < d; ++e) dp += do_row[e] * v_row[e];
            dp *= do_descale * head.v_descale[col];
            // FA_MUTANT_BWD_MISSING_DELTA: dS = P * dP, without the softmax Jacobian's -D term.
            float const ds = mut.on(MutantId::bwd_missing_delta) ? p * dp : p * (dp - delta);
            float const ds_rounded = round_to(c.ds_precision, ds);  // dS enters the MMAs rounded
            float const dk_weight = ds_rounded * head.q_descale[r];
            float const dq_weight = ds_rounded * head.k_descale[col];
            float* dk_row = dk_acc.data() + static_cast<std::size_t>(j) * d;
            for (std::size_t e = 0; e < d; ++e) dk_row[e] += dk_weight * q_row[e];
            for (std::size_t e = 0; e < d; ++e) dq_row[e] += dq_weight * k_row[e];
          }
        }
        float* dq_dst = dq_head + static_cast<std::size_t>(r0) * d;
        std::size_t const tile_values = static_cast<std::size_t>(r1 - r0) * d;
        if (mut.on(MutantId::bwd_dq_overwrite)) {  // FA_MUTANT_BWD_DQ_OVERWRITE
          std::copy_n(dq_tile.begin(), tile_values, dq_dst);
        } else {
          for (std::size_t e = 0; e < tile_values; ++e) dq_dst[e] += dq_tile[e];
        }
      }
    }
    // FA_MUTANT_BWD_DK_MISSING_SCALE: dK = dS^T Q without the softmax scale.
    float const dk_scale = mut.on(MutantId::bwd_dk_missing_scale) ? 1.0f : c.softmax_scale;
    for (int j = 0; j < valid_keys; ++j) {
      std::size_t const dst = (bhk * nk + static_cast<std::size_t>(c0 + j)) * d;
      for (std::size_t e = 0; e < d; ++e) {
        out.dk[dst + e] = round_to(c.out_precision, dk_acc[static_cast<std::size_t>(j) * d + e] * dk_scale);
        out.dv[dst + e] = round_to(c.out_precision, dv_acc[static_cast<std::size_t>(j) * d + e]);
      }
    }
  }
  for (int g = 0; g < group; ++g) {
    std::size_t const bh =
        b * static_cast<std::size_t>(shape.heads_q) + static_cast<std::size_t>(hk * group + g);
    float const* src = dq_accum.data() + static_cast<std::size_t>(g) * nq * d;
    for (std::size_t e = 0; e < nq * d; ++e)
      out.dq[bh * nq * d + e] = round_to(c.out_precision, src[e] * c.softmax_scale);
  }
}

}  // namespace

BackwardResult emulate_backward(AttentionInputs const& in, EmulatorConfig const& config) {
  if (!in.has_backward()) throw std::invalid_argument("the backward needs dO; the inputs carry none");
  PrecisionRecipe const recipe = recipe_for(config.precision);
  QuantizedOperands const ops = quantize_operands(in, recipe);
  return emulate_backward(ops, recipe, emulate_forward(ops, recipe, config), config);
}

BackwardResult emulate_backward(QuantizedOperands const& ops, PrecisionRecipe const& recipe,
                                ForwardResult const& forward, EmulatorConfig const& config) {
  common::AttentionShape const& shape = ops.shape;
  if (ops.v_transform)
    throw std::invalid_argument("FP8 variant rotate_v is a forward variant (the backward reads V unrotated)");
  if (ops.d_o.size() != shape.q_elements() || ops.d_o_descale.size() != shape.lse_elements())
    throw std::invalid_argument("dO has " + std::to_string(ops.d_o.size()) + " values, the shape needs " +
                                std::to_string(shape.q_elements()));
  if (forward.o.size() != shape.q_elements() || forward.lse.size() != shape.lse_elements() ||
      forward.row_max.size() != shape.lse_elements())
    throw std::invalid_argument("forward result does not match the shape");
  PreparedProblem const prepared(ops, config);
  auto const d = static_cast<std::size_t>(shape.head_dim);
  std::vector<float> delta(shape.lse_elements(), 0.0f);
  for (std::size_t row = 0; row < delta.size(); ++row) {
    // fp32, from O as written and dO as loaded, as the preprocessing kernel reads them.
    float sum = 0.0f;
    for (std::size_t e = 0; e < d; ++e) sum += ops.d_o[row * d + e] * forward.o[row * d + e];
    delta[row] = sum * ops.d_o_descale[row];
  }
  BackwardResult out{std::vector<float>(shape.q_elements(), 0.0f),
                     std::vector<float>(shape.kv_elements(), 0.0f),
                     std::vector<float>(shape.kv_elements(), 0.0f)};
  BackwardContext const ctx{shape,
                            make_constants(shape, recipe, config.mutants),
                            config.mutants,
                            config.tiles,
                            &prepared,
                            ops.d_o.data(),
                            ops.d_o_descale.data(),
                            delta.data(),
                            forward.lse.data(),
                            forward.row_max.data()};
  auto const units = static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.heads_kv);
  for_each_unit(units, resolve_thread_count(config.threads), [&](std::size_t unit) {
    backward_kv_head(ctx, unit / static_cast<std::size_t>(shape.heads_kv),
                     static_cast<int>(unit % static_cast<std::size_t>(shape.heads_kv)), out);
  });
  return out;
}

}  // namespace fl::numerics::emulator
