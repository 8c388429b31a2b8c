// The numerics issue's no-false-positive sweep, run on the tiled emulator: correct FA-1 and FA-2 loop orders
// at many tile sizes, in fp16, bf16 and fp8 (e4m3/e5m2, per-tensor and per-block scaling, with and without
// incoherent processing), on every input family, must never exceed the tolerance bound.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <iostream>

#include "numerics/emulator/emulator.hpp"
#include "numerics/input_families.hpp"
#include "numerics/tolerance_sweep.hpp"

namespace {

using namespace fl::numerics;
namespace emu = fl::numerics::emulator;

// The sweep draws one shape per seed; the tile and loop order follow from the shape and the first input
// value, so every configuration meets every family and precision across the seeds, deterministically.
emu::EmulatorConfig config_for(AttentionInputs const& in, PrecisionRecipe const& recipe,
                               std::span<int const> tile_sizes) {
  auto const mix = static_cast<std::uint64_t>(in.shape.seqlen_q) * 7919u +
                   static_cast<std::uint64_t>(in.shape.seqlen_k) * 104729u +
                   static_cast<std::uint64_t>(in.q.empty() ? 0.0 : in.q[0] * 1e6);
  emu::EmulatorConfig c;
  c.precision = recipe.claimed;
  c.tiles.block_m = tile_sizes[mix % tile_sizes.size()];
  c.tiles.block_n = tile_sizes[(mix / tile_sizes.size()) % tile_sizes.size()];
  c.loop_order =
      (mix / (tile_sizes.size() * tile_sizes.size())) % 2 == 0 ? emu::LoopOrder::fa2 : emu::LoopOrder::fa1;
  c.threads = 1;
  return c;
}

void run_sweep(SweepOptions const& options, std::span<int const> tile_sizes, std::size_t expected_runs) {
  auto const implementation = [tile_sizes](AttentionInputs const& in, PrecisionRecipe const& recipe) {
    return emu::emulate(in, recipe, config_for(in, recipe, tile_sizes));
  };
  SweepResult const r = run_tolerance_sweep(implementation, options);
  INFO("worst: " << r.worst_case);
  INFO("first failure: " << r.first_failure);
  std::cout << "emulator sweep: " << r.runs << " runs, worst error/bound " << r.worst_ratio << " ("
            << r.worst_case << ")\n";
  CHECK(r.runs == expected_runs);
  CHECK(r.failing_runs == 0);
}

}  // namespace

TEST_CASE("no false positives: tiled emulator (FA-1, FA-2, tiles 4..32) on every family over 1000 seeds",
          "[emulator][tolerance]") {
  // Sequences up to 24 (the sweep's default): tiles of 4..16 give several blocks and partial tails.
  static constexpr std::array kTiles{4, 8, 16, 32};
  SweepOptions options;
  options.seeds = 1000;
  run_sweep(options, kTiles, 1000u * all_input_families().size() * options.precisions.size());
}

TEST_CASE("no false positives: tiled emulator at kernel tile sizes on longer sequences",
          "[emulator][tolerance]") {
  // Sequences up to 80 with the kernels' tiles 16..64: several key blocks per row at realistic sizes.
  static constexpr std::array kTiles{16, 32, 64};
  SweepOptions options;
  options.seeds = 60;
  options.first_seed = 5001;
  options.max_seqlen = 80;
  run_sweep(options, kTiles, 60u * all_input_families().size() * options.precisions.size());
}
