#pragma once
// The two forward loop orders, one (batch, query head) at a time. Internal to the emulator.
#include <cstdint>
#include <span>

#include "numerics/emulator/tile_primitives.hpp"
#include "numerics/incoherent_processing.hpp"

namespace fl::numerics::emulator {

struct HeadOutput {
  float* o = nullptr;        // (N_q, D)
  float* lse = nullptr;      // (N_q)
  float* row_max = nullptr;  // (N_q)
};

struct ForwardParams {
  common::AttentionShape shape;
  SoftmaxConstants constants;
  MutantSet mutants;
  TileConfig tiles;
  KeyOrder key_order = KeyOrder::first_to_last;  // FA-2 only
  int warps_n = 1;                               // FA-2 only
  // The rotate_v variant: V was rotated by this transform; write_row undoes it on each O row (fp32 values,
  // before the output rounding), as a kernel's epilogue would.
  IncoherentTransform const* v_rotation = nullptr;
};

// FA-2 order: one query tile [r0, r1), its rows' m, l, acc live across the inner loop over key blocks.
void fa2_forward_query_tile(HeadView const& head, HeadOutput const& out, ForwardParams const& params, int r0,
                            int r1);

// FA-1 order: outer loop over key blocks, inner over query tiles; O (normalised), m and l per row are kept
// in fp32 between outer steps, as FlashAttention-1 keeps them in global memory. selected: one flag per
// query row (empty = all); tiles without a selected row are skipped.
void fa1_forward_head(HeadView const& head, HeadOutput const& out, ForwardParams const& params,
                      std::span<std::uint8_t const> selected);

// Writes one finished row: O = acc * (1/l unless already normalised) rounded to the output precision,
// LSE and the final running max.
void write_row(HeadOutput const& out, ForwardParams const& params, int row, float const* acc, float m,
               float l, bool already_normalised);

// A query tile that sees no key at all (causal with N_q > N_k): written as fully masked rows without
// entering the loop, as FlashAttention exits early.
void write_masked_rows(HeadOutput const& out, ForwardParams const& params, int r0, int r1);

}  // namespace fl::numerics::emulator
