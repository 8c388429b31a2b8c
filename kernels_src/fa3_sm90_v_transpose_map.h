#pragma once
// fa3_sm90 FP8, the index math of V^T (plain constexpr C++ that NVRTC and the host both compile, so a CPU
// test checks the kernel's own functions): the key order P V reads, where TMA puts a byte of a swizzled
// panel, and how the in-kernel transpose (kTransposeV = 1, fa3_sm90_v_transpose_smem.cuh) splits a tile
// among its lanes so that every 32-bit shared load and store of a warp hits 32 different banks.
#include "fa3_sm90_config.h"

namespace fa3 {

// The key at byte position `position` of a V^T row: within each 16 keys, position p holds key
// 2 c + (j & 1) + 8 (j >> 1) with c = (p % 16) / 4 and j = p % 4, i.e. the keys {2c, 2c+1, 8+2c, 9+2c}
// that thread column c of a wgmma accumulator owns, in A-operand slots 4c..4c+3 (fa3_sm90_consumer.cuh).
FA3_CONFIG_FN int permuted_key(int position) {
  const int q = position % 16, c = q / 4, j = q % 4;
  return 16 * (position / 16) + 2 * c + (j & 1) + 8 * (j >> 1);
}

// Where a TMA box of rows x `span` bytes puts byte `byte` of row `row` (CU_TENSOR_MAP_SWIZZLE_128B or _64B,
// the panel 1024- or 512-aligned): 16-byte chunk c of the row at chunk c ^ (row % 8) for 128 bytes, at
// c ^ ((row / 2) % 4) for 64 (address bits 4-6 ^= bits 7-9, bits 4-5 ^= bits 7-8). The wgmma descriptors'
// swizzle modes 1 and 2 (fa_wgmma.cuh) read the same layouts.
FA3_CONFIG_FN int swizzled_offset(int span, int row, int byte) {
  const int pattern = span == 128 ? row % 8 : (row / 2) % 4;
  return row * span + (((byte / 16) ^ pattern) * 16) + byte % 16;
}

// Byte offsets in the two shared tiles of a key block: the staged row-major V tile (kBlockN rows of D codes,
// panels of swizzle_span(D) columns: as the K tile) and the V^T slot (D rows of kBlockN positions, panels of
// swizzle_span(kBlockN) positions: PanelTile<D, kBlockN> of fa3_sm90_layout.cuh).
FA3_CONFIG_FN int staged_v_offset(int head_dim, int block_n, int key, int column) {
  const int span = swizzle_span(head_dim);
  return (column / span) * block_n * span + swizzled_offset(span, key, column % span);
}
FA3_CONFIG_FN int vt_slot_offset(int head_dim, int block_n, int column, int position) {
  const int span = swizzle_span(block_n);
  return (position / span) * head_dim * span + swizzled_offset(span, column, position % span);
}

// The transpose's unit: four keys {2c, 2c+1, 8+2c, 9+2c} of 16-key group `group` and four columns from
// `column`: four 32-bit loads (one per key), a 4 x 4 byte transpose, four 32-bit stores (one V^T word per
// column, at positions 16 group + 4c..+3). A warp step is 32 units, lane = (c, a, b): c = lane % 4,
// a = (lane / 4) % 4, b = lane / 16; step = (key quad G, column pair C, turn s) as below. Column
// 32 C + 16 b + 4 a and group 4 G + ((2 (a >> 1) + b) ^ s): the four turns s cover each (group, column)
// pair of a 64-key x 32-column block once. Banks (32 of 4 bytes): a load's bank is 4 (chunk ^ key % 8) + a
// (128-byte rows) with key % 8 = 2c + (e & 1), so (b, c) fill the chunk bits and a the low ones; a
// store's is 4 (group % 8 ^ column % 8) + c. The 64-byte swizzles put row % 2 in bank bit 4, which one
// operand order per lane repairs: with 64-byte V rows (d64) lane b loads its keys in the order e ^ b, with
// 64-byte V^T rows (kBlockN 64) lane a & 1 stores its columns in the order i ^ (a & 1). Every 32-bit access
// of a warp then hits 32 banks at every (D, kBlockN) (tests/kernels_src/fa3_sm90_v_transpose_map_test.cpp).
struct TransposeUnit {
  int group;   // 16-key group of the block
  int pair;    // c: keys 2c, 2c+1, 8+2c, 9+2c of the group
  int column;  // the first of four columns
};
FA3_CONFIG_FN int transpose_steps(int head_dim, int block_n) {
  return block_n * head_dim / (32 * 16);  // 32 units of 16 bytes per warp step
}
FA3_CONFIG_FN TransposeUnit transpose_unit(int head_dim, int step, int lane) {
  const int c = lane % 4, a = (lane / 4) % 4, b = lane / 16;
  const int column_pairs = head_dim / 32, turn = step % 4;
  const int column_pair = (step / 4) % column_pairs, key_quad = step / 4 / column_pairs;
  return {4 * key_quad + ((2 * (a >> 1) + b) ^ turn), c, 32 * column_pair + 16 * b + 4 * a};
}
// The key whose word load `e` (0..3) of `lane` reads: key 2c + (e' & 1) + 8 (e' >> 1) of the group, with
// e' = e ^ load_flip (the word lands in register e).
FA3_CONFIG_FN int load_flip(int head_dim, int lane) {
  return swizzle_span(head_dim) == 64 ? lane / 16 : 0;
}
FA3_CONFIG_FN int store_flip(int block_n, int lane) {
  return swizzle_span(block_n) == 64 ? (lane / 4) % 2 : 0;
}
FA3_CONFIG_FN int unit_key(const TransposeUnit& u, int e) {
  return 16 * u.group + 2 * u.pair + (e & 1) + 8 * (e >> 1);
}

// prmt.b32 selectors of the 4 x 4 byte transpose of words r0..r3 (r_e = key e ^ load_flip's 4 columns).
// Pass 1 interleaves pairs: lo(r0, r1) = [r0.b0 r1.b0 r0.b1 r1.b1], hi = [r0.b2 r1.b2 r0.b3 r1.b3], and the
// same for (r2, r3); with the load flip r0 and r1 hold keys 1 and 0, so their bytes swap. Pass 2 joins
// halves: column 0 = [lo01.lo16 lo23.lo16], column 1 = [lo01.hi16 lo23.hi16] (2, 3 from hi). Output
// register i holds column i ^ store_flip.
FA3_CONFIG_FN unsigned interleave_low_selector(int flip) {
  return flip ? 0x1504u : 0x5140u;
}
FA3_CONFIG_FN unsigned interleave_high_selector(int flip) {
  return flip ? 0x3726u : 0x7362u;
}
FA3_CONFIG_FN unsigned join_selector(int output, int flip) {  // output 0, 2: even columns; 1, 3: odd
  return ((output ^ flip) & 1) ? 0x7632u : 0x5410u;
}

}  // namespace fa3
