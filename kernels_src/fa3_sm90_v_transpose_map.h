#pragma once
// fa3_sm90 FP8, the index math of V^T (plain constexpr C++ that NVRTC and the host both compile, so a CPU
// test checks the kernel's own functions): the key order P V reads, where TMA puts a byte of a swizzled
// panel, and how the in-kernel transpose (kTransposeV = 1, fa3_sm90_v_transpose_smem.cuh) cuts a tile
// into ldmatrix.trans / stmatrix steps whose every 8x8 matrix is one conflict-free wavefront.
#include "fa3_sm90_config.h"

namespace fa3 {

// The key at byte position `position` of a V^T row: within each 16 keys, position p holds key
// 2 c + (j & 1) + 8 (j >> 1) with c = (p % 16) / 4 and j = p % 4, i.e. the keys {2c, 2c+1, 8+2c, 9+2c}
// that thread column c of a wgmma accumulator owns, in A-operand slots 4c..4c+3 (fa3_sm90_consumer.cuh).
FA_CONFIG_FN int permuted_key(int position) {
  const int q = position % 16, c = q / 4, j = q % 4;
  return 16 * (position / 16) + 2 * c + (j & 1) + 8 * (j >> 1);
}

// V^T in global memory, the FP8 forward's V operand: codes (B, H_kv, D, transposed_keys(N_k)), V^T row
// `column` of matrix `matrix` (batch x H_kv + kv head) holding at byte `position` the code of key
// permuted_key(position), zero where that key is at or past N_k. The transpose launch writes it from
// row-major V; with a pre-transposed V (fa-bench --fp8-v-layout transposed) the host
// (device/run/fp8_v_layout.hpp) or the device quantisation (fp8_quantize_transposed_v.cuh) writes it and the
// forward reads it as V itself.
FA_CONFIG_FN long long vt_global_offset(int head_dim, int seqlen_k, long long matrix, int column,
                                        int position) {
  return (matrix * head_dim + column) * transposed_keys(seqlen_k) + position;
}

// Where a TMA box of rows x `span` bytes puts byte `byte` of row `row` (CU_TENSOR_MAP_SWIZZLE_128B or _64B,
// the panel 1024- or 512-aligned): 16-byte chunk c of the row at chunk c ^ (row % 8) for 128 bytes, at
// c ^ ((row / 2) % 4) for 64 (address bits 4-6 ^= bits 7-9, bits 4-5 ^= bits 7-8). The wgmma descriptors'
// swizzle modes 1 and 2 (fa_wgmma.cuh) read the same layouts.
FA_CONFIG_FN int swizzle_pattern(int span, int row) {
  return span == 128 ? row % 8 : (row / 2) % 4;
}
FA_CONFIG_FN int swizzled_offset(int span, int row, int byte) {
  return row * span + (((byte / 16) ^ swizzle_pattern(span, row)) * 16) + byte % 16;
}

// Byte offsets in the two shared tiles of a key block: the staged row-major V tile (kBlockN rows of D codes,
// panels of swizzle_span(D) columns: as the K tile) and the V^T slot (D rows of kBlockN positions, panels of
// swizzle_span(kBlockN) positions: PanelTile<D, kBlockN> of fa3_sm90_layout.cuh).
FA_CONFIG_FN int staged_v_offset(int head_dim, int block_n, int key, int column) {
  const int span = swizzle_span(head_dim);
  return (column / span) * block_n * span + swizzled_offset(span, key, column % span);
}
FA_CONFIG_FN int vt_slot_offset(int head_dim, int block_n, int column, int position) {
  const int span = swizzle_span(block_n);
  return (position / span) * head_dim * span + swizzled_offset(span, column, position % span);
}

// The transpose's warp step: 16 keys (16-key group `group`) x 32 columns (16-byte chunks 2 pair, 2 pair + 1)
// of the staged tile, 512 bytes, in three instructions per lane plus four prmt:
//   ldmatrix.x4.trans (b16): matrix m holds keys 16 group + 8 (m & 1) + 0..7 (its rows, one per address)
//     at chunk 2 pair + (m >> 1); lane l = 4 r + q receives, per matrix, keys 2q and 2q + 1 (two b16 rows
//     of the transposed 8x8) at columns 2r, 2r + 1 of the chunk: register m = [k2q.c2r, k2q.c2r+1,
//     k2q+1.c2r, k2q+1.c2r+1] (keys and columns relative to the matrix);
//   prmt of registers 2h and 2h + 1 (keys 0..7 and 8..15 of chunk 2 pair + h): [b0 b2 b4 b6] is column 2r's
//     V^T word of keys {2q, 2q+1, 8+2q, 9+2q}, the permuted order's positions 4q..4q+3 (permuted_key);
//     [b1 b3 b5 b7] is column 2r + 1's;
//   stmatrix.x4 (b16): lane l's register m goes to row r, bytes 4q..4q+3 of matrix m, whose row r' is the
//     V^T row (column) 16 (2 pair + (m >> 1)) + 2 r' + ((m & 1) ^ (r' >> 2)) at positions 16 group..+15.
// The parity swap for r' >= 4 (lanes 16..31 take the odd column into register 2h) gives each stmatrix
// matrix the V^T rows {0, 2, 4, 6, 9, 11, 13, 15} or {1, 3, 5, 7, 8, 10, 12, 14} of its 16 columns: eight
// different 16-byte bank groups under the 128-byte swizzle (row % 8) and the 64-byte one (row % 2,
// (row / 2) % 4). The ldmatrix matrices are 8 consecutive keys at one logical chunk: eight bank groups under
// either swizzle too. So every matrix of either instruction is one wavefront: 4 + 4 per 512 bytes, 256
// per 16 KiB tile, the minimum (tests/kernels_src/fa3_sm90_v_transpose_map_test.cpp checks all of it).
FA_CONFIG_FN int transpose_steps(int head_dim, int block_n) {
  return block_n * head_dim / 512;  // 16 keys x 32 columns per warp step
}
struct TransposeStep {
  int group;  // 16-key group of the block
  int pair;   // 32-column pair of 16-byte chunks
};
// The divisions of a step's parts are by powers of two (pairs 2, 4, 8; chunks 4, 8) of a step >= 0: written
// as shifts and masks, since NVRTC 13.0 kept the sign fix-ups of / and % on the kernel's step (5 more
// instructions each).
FA_CONFIG_FN int log2_of(int power_of_two) {
  int bits = 0;
  while ((1 << bits) < power_of_two) ++bits;
  return bits;
}
FA_CONFIG_FN TransposeStep transpose_step(int head_dim, int step) {
  const int pairs = head_dim / 32;
  return {step >> log2_of(pairs), step & (pairs - 1)};
}
// The key and the first column of the row that `lane` addresses for ldmatrix (matrix lane / 8, row lane % 8).
FA_CONFIG_FN int ldmatrix_key(const TransposeStep& s, int lane) {
  return 16 * s.group + 8 * ((lane / 8) & 1) + lane % 8;
}
FA_CONFIG_FN int ldmatrix_column(const TransposeStep& s, int lane) {
  return 16 * (2 * s.pair + lane / 16);
}
// The V^T row (column of V) that `lane` addresses for stmatrix (matrix lane / 8, row r' = lane % 8); its 16
// bytes are positions 16 group..16 group + 15.
FA_CONFIG_FN int stmatrix_column(const TransposeStep& s, int lane) {
  const int m = lane / 8, r = lane % 8;
  return 16 * (2 * s.pair + (m >> 1)) + 2 * r + ((m & 1) ^ (r >> 2));
}
// The prmt selector of output register m (0..3) of `lane`: the even column (bytes 0, 2, 4, 6 of the pair) or
// the odd one (1, 3, 5, 7), as stmatrix_column's parity for the row r = lane / 4 that this lane fills.
FA_CONFIG_FN unsigned join_selector(int lane, int m) {
  return ((m & 1) ^ ((lane / 4) >> 2)) ? 0x7531u : 0x6420u;
}

// The kernel's form of the two row offsets above: offset = add(lane) + add(step) + (xor(lane) ^ xor(step)),
// the xor parts in the 16-byte chunk bits that the swizzle mixes (bits 4-6), the add parts in the others
// (rows, panels), so each lane computes its part once and a step costs two integer operations per address.
struct SplitOffset {
  int add, x;
};
FA_CONFIG_FN int join(const SplitOffset& lane, const SplitOffset& step) {
  return lane.add + step.add + (lane.x ^ step.x);
}
// staged_v_offset(ldmatrix_key, ldmatrix_column): row = key, chunk 2 pair + lane / 16 of a panel of
// swizzle_span(D) bytes; the key's swizzle pattern (key % 8, or (key / 2) % 4) is lane % 8's (16 group and
// 8 (m & 1) keep it), and 2 pair's chunk bits do not overlap lane / 16's bit 0.
FA_CONFIG_FN SplitOffset staged_lane_part(int head_dim, int lane) {
  const int span = swizzle_span(head_dim), key = 8 * ((lane / 8) & 1) + lane % 8;
  return {key * span, 16 * ((lane / 16) ^ swizzle_pattern(span, key))};
}
FA_CONFIG_FN SplitOffset staged_step_part(int head_dim, int block_n, int step) {
  const int span = swizzle_span(head_dim), chunks = span / 16;
  const TransposeStep s = transpose_step(head_dim, step);
  return {((2 * s.pair) >> log2_of(chunks)) * block_n * span + 16 * s.group * span,
          16 * ((2 * s.pair) & (chunks - 1))};
}
// vt_slot_offset(stmatrix_column, 16 group): row = the column, chunk = group of a panel of
// swizzle_span(kBlockN) positions; the column's pattern (column % 8, or (column / 2) % 4) depends on lane % 8
// alone.
FA_CONFIG_FN SplitOffset vt_lane_part(int block_n, int lane) {
  const int span = swizzle_span(block_n);
  const int column = stmatrix_column(TransposeStep{0, 0}, lane);
  return {column * span, 16 * swizzle_pattern(span, column)};
}
FA_CONFIG_FN SplitOffset vt_step_part(int head_dim, int block_n, int step) {
  const int span = swizzle_span(block_n), chunks = span / 16;
  const TransposeStep s = transpose_step(head_dim, step);
  return {(s.group >> log2_of(chunks)) * head_dim * span + 32 * s.pair * span, 16 * (s.group & (chunks - 1))};
}

}  // namespace fa3
