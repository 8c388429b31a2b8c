// emulate_forward: splits the problem into (batch, head, query tile) units (FA-2) or (batch, head) units
// (FA-1, whose outer loop runs over key blocks) and runs the chosen loop order on each.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>

#include "numerics/emulator/emulator.hpp"
#include "numerics/emulator/forward_kernels.hpp"
#include "numerics/emulator/parallel_units.hpp"
#include "numerics/emulator/prepared_problem.hpp"

namespace fl::numerics::emulator {

namespace {

bool any_selected(std::span<std::uint8_t const> selected, int r0, int r1) {
  return selected.empty() ||
         std::any_of(selected.begin() + r0, selected.begin() + r1, [](std::uint8_t f) { return f != 0; });
}

}  // namespace

ForwardResult emulate_forward(AttentionInputs const& in, EmulatorConfig const& config,
                              std::span<std::uint8_t const> row_selection) {
  PrecisionRecipe const recipe = recipe_for(config.precision);
  return emulate_forward(quantize_operands(in, recipe), recipe, config, row_selection);
}

ForwardResult emulate_forward(QuantizedOperands const& ops, PrecisionRecipe const& recipe,
                              EmulatorConfig const& config, std::span<std::uint8_t const> row_selection) {
  PreparedProblem const prepared(ops, config);
  common::AttentionShape const& shape = ops.shape;
  if (!row_selection.empty() && row_selection.size() != shape.lse_elements())
    throw std::invalid_argument(
        "row selection has " + std::to_string(row_selection.size()) +
        " entries, expected one per (B, H_q, N_q) row: " + std::to_string(shape.lse_elements()));
  ForwardResult result;
  float const nan = std::numeric_limits<float>::quiet_NaN();
  result.o.assign(shape.q_elements(), nan);
  result.lse.assign(shape.lse_elements(), nan);
  result.row_max.assign(shape.lse_elements(), nan);

  ForwardParams const params{shape,
                             make_constants(shape, recipe, config.mutants),
                             config.mutants,
                             config.tiles,
                             config.key_order,
                             config.warps_n,
                             ops.v_transform ? &*ops.v_transform : nullptr};
  if (ops.v_transform && config.loop_order == LoopOrder::fa1)
    throw std::invalid_argument("FP8 variant rotate_v: emulated in the FA-2 loop order only");
  auto const heads = static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.heads_q);
  auto const nq = static_cast<std::size_t>(shape.seqlen_q);
  auto const d = static_cast<std::size_t>(shape.head_dim);
  auto output_of = [&](std::size_t bh) {
    return HeadOutput{result.o.data() + bh * nq * d, result.lse.data() + bh * nq,
                      result.row_max.data() + bh * nq};
  };
  auto selection_of = [&](std::size_t bh) {
    return row_selection.empty() ? std::span<std::uint8_t const>{} : row_selection.subspan(bh * nq, nq);
  };
  int const threads = resolve_thread_count(config.threads);

  if (config.loop_order == LoopOrder::fa1) {
    // The FP8 P variants live in fold_row, the FA-2 step; FA-1 keeps O normalised in its own update.
    if (is_fp8(recipe.claimed) && !recipe.fp8_variants.is_fa3())
      throw std::invalid_argument("FP8 variant " + name(recipe.fp8_variants) +
                                  ": emulated in the FA-2 loop order only (loop order fa1 takes fa3)");
    for_each_unit(heads, threads, [&](std::size_t bh) {
      fa1_forward_head(prepared.head(bh), output_of(bh), params, selection_of(bh));
    });
    return result;
  }
  int const bm = config.tiles.block_m;
  auto const tiles = static_cast<std::size_t>((shape.seqlen_q + bm - 1) / bm);
  for_each_unit(heads * tiles, threads, [&](std::size_t unit) {
    std::size_t const bh = unit / tiles;
    int const r0 = static_cast<int>(unit % tiles) * bm;
    int const r1 = std::min(shape.seqlen_q, r0 + bm);
    if (!any_selected(selection_of(bh), r0, r1)) return;
    fa2_forward_query_tile(prepared.head(bh), output_of(bh), params, r0, r1);
  });
  return result;
}

}  // namespace fl::numerics::emulator
