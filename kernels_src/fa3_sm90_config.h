#pragma once
// fa3_sm90 forward: its tunables, the constraints between them and its shared-memory arithmetic, in ONE
// place that both compilers read: the kernel (NVRTC) static_asserts `violation(...) == nullptr` and takes
// its layout from `SharedLayout`; the host (g++, device/families/fa3_sm90.cpp) prunes with the same
// `violation` and sizes the launch with the same `shared_bytes`. Plain constexpr C++; its one header
// (fa_arch.h, the architecture limits every family reads) is the same.
#include "fa_arch.h"

namespace fa3 {

constexpr int kWarpgroupThreads = 128;
constexpr int kRowsPerConsumer = 64;  // one wgmma m64 row tile per consumer warpgroup (as FlashAttention-3)
constexpr int kMaxSharedBytes = fa::kMaxSharedBytesPerBlock;  // fa_arch.h
constexpr int kSharedAlignSlack = 1024;  // the dynamic base is rounded up to the 1024-byte swizzle atom
constexpr int kPanelBytes = 128;         // 128-byte swizzle: tiles are stored as 128-byte-wide panels
constexpr int kRegisterFile = 65536;     // 32-bit registers per SM
// Registers a consumer thread needs beyond the accumulators (addresses, softmax state, loop counters):
// ptxas for d128 128x128 used ~40 more than O + S + P (CUDA 13.0, sm_90a).
constexpr int kConsumerRegisterSlack = 40;
// FP8: V is read as the K-major B operand of O += P V (wgmma takes FP8 B K-major only), so a transpose
// kernel writes V^T, (B, H_kv, D, N_k rounded up to kTransposedKeyMultiple), before the forward. The
// padded keys are zero codes (never NaN: P = 0 times a NaN code would still be NaN); 128 keys = one
// 128-byte swizzle span, so every TMA box of V^T lies inside the padded rows.
constexpr int kTransposedKeyMultiple = 128;
constexpr int kTransposeKeys = 64;      // keys per CTA of the transpose kernel
constexpr int kTransposeThreads = 256;  // its threads: 4 x 16-byte loads of a d256 row block each
// kTransposeV = 1 (FlashAttention-3's alternative): the producer warpgroup's warps 1..3 transpose V in shared
// memory (fa3_sm90_v_transpose_smem.cuh); warp 0's first thread keeps issuing every TMA copy, so no
// transposing thread ever waits for the copies it would have to issue itself.
constexpr int kTransposeWarps = 3;

struct FwdTunables {
  int head_dim;       // 64, 128, 256
  int element_bytes;  // 2 (fp16, bf16) or 1 (fp8_e4m3, fp8_e5m2)
  int block_n;        // keys per block: 16-bit a multiple of 16 (the P.V k-step) in 64..256; FP8 64, 128, 256
  int consumers;      // consumer warpgroups, 1..3; kBlockM = 64 * consumers
  int stages;         // K/V shared-memory slots, 2..3
  int ping_pong;      // 0/1: consumer warpgroups take turns issuing their products (needs >= 2)
  int intra_wg_overlap;  // 0/1: S_{j+1} = Q K_{j+1} is issued before the softmax of block j
  int persistent;        // kOneCtaPerTile, kStaticTiles or kDynamicTiles (below)
  int separate_o;        // 0/1: O staged in a tile of its own, so Q is released when the tile's products
                         // are done and the next tile's Q loads during this one's epilogue (FP8 always
                         // has that tile; there 1 only moves the release)
  // FP8 only, 0/1: O += P V in bf16 (numerics' bf16_pv variant): V given in bf16 and read N-major as the
  // 16-bit family reads it (no V^T), P rounded to bf16 instead of FP8; S = Q K^T stays FP8. Not a tunable
  // of the search: it changes what is computed (the problem's Fp8Options::bf16_pv sets it).
  int pv_bf16 = 0;
  // FP8 with V^T only, 0/1: where V^T comes from. 0: the transpose launch before the forward writes V^T to
  // global memory (fa3_sm90_transpose.cuh) and the producer TMA-loads its tiles. 1: the producer TMA-loads
  // row-major V tiles (kBlockN keys x D codes) into a ring of kStages staging slots and its warps 1..3 write
  // them into the V^T slots in the same permuted key order and swizzle (fa3_sm90_v_transpose_smem.cuh): no
  // launch and no V^T scratch, kStages x kBlockN x D more shared bytes, 40 producer registers with 2
  // consumers (232 each).
  int transpose_v = 0;
};

// kPersistent: how the CTAs take their tiles (fa_tile_scheduler.cuh).
constexpr int kOneCtaPerTile = 0;  // a grid of one CTA per tile; the hardware block scheduler balances them
constexpr int kStaticTiles = 1;    // one CTA per SM taking tiles blockIdx.x, + gridDim.x, ... of one order
constexpr int kDynamicTiles = 2;   // one CTA per SM taking the next tile of that order from a global counter
// The producer hands each tile index to the consumers through shared memory (kDynamicTiles), next to the
// barriers: one int, padded to the barriers' 8 bytes.
constexpr int kTileSlotBytes = 8;

FA_CONFIG_FN int block_m(const FwdTunables& t) {
  return kRowsPerConsumer * t.consumers;
}
FA_CONFIG_FN int threads(const FwdTunables& t) {
  return kWarpgroupThreads * (1 + t.consumers);
}

// setmaxnreg split. A CTA keeps the registers it was launched with (the cap at entry: 65536 / threads,
// rounded down to 8, at most 255): setmaxnreg only moves them between its warpgroups, and an increase that
// the CTA's own allocation cannot cover waits forever (seen on the H200: 32 + 2 x 240 > 3 x 168 hung the
// consumers in setmaxnreg.inc until the producer's barrier timeout trapped). So the producer warpgroup
// keeps kProducerRegisters and the consumers share the rest, rounded down to setmaxnreg's multiple of 8:
// 2 consumers (3 x 168 = 504): 24 + 2 x 240; 3 consumers (4 x 128 = 512): 32 + 3 x 160. One consumer
// warpgroup already has the 255-register cap at entry and skips the exchange.
FA_CONFIG_FN int entry_registers(int consumers) {
  const int per_thread = kRegisterFile / (kWarpgroupThreads * (1 + consumers)) / 8 * 8;
  return per_thread > 255 ? 255 : per_thread;
}
//
// The in-kernel V transpose (kTransposeV = 1) runs in the producer warpgroup: its warps 1..3 loop over
// transpose steps (fa3_sm90_v_transpose_smem.cuh: ldmatrix.x4.trans, four prmt, stmatrix.x4, two steps in
// flight) beside the TMA thread's state. At 24 registers ptxas (CUDA 13.0) spilled 8-20 bytes (FP8
// d64 x 256 and d128 x 128: 8; d256 x 64: 20; the 32-bit-word transpose before it, 4-20); at 40 none. 40
// costs the consumers no more than 32 would: (504 - 32) / 2 = 236 and (504 - 40) / 2 = 232 both round down to
// 232 (48 would give 224), so 2 consumers: 40 + 2 x 232. 3 consumers (4 x 128 = 512): 32 + 3 x 160 as without
// it, which ptxas fits without spills; 40 would cost each consumer 8 ((512 - 40) / 3 = 157, down to 152).
constexpr int kTransposeProducerRegisters2 = 40;
FA_CONFIG_FN int producer_registers(int consumers, int transpose_v = 0) {
  if (transpose_v && consumers == 2) return kTransposeProducerRegisters2;
  return consumers == 2 ? 24 : 32;
}
FA_CONFIG_FN int consumer_registers(int consumers, int transpose_v = 0) {
  if (consumers == 1) return entry_registers(1);
  return (entry_registers(consumers) * (1 + consumers) - producer_registers(consumers, transpose_v)) /
         consumers / 8 * 8;
}

// Shared tiles are panels of rows x span bytes, swizzled with the span (TMA's swizzle = the box's row
// bytes): a tile row of 128 bytes or more is cut into 128-byte panels; a 64-byte row (FP8 d64 Q and K,
// FP8 V^T of 64 keys) is one 64-byte-swizzled panel.
FA_CONFIG_FN int swizzle_span(int row_bytes) {
  return row_bytes >= kPanelBytes ? kPanelBytes : row_bytes;
}
FA_CONFIG_FN int transposed_keys(int seqlen_k) {
  return (seqlen_k + kTransposedKeyMultiple - 1) / kTransposedKeyMultiple * kTransposedKeyMultiple;
}
FA_CONFIG_FN bool is_fp8(const FwdTunables& t) {
  return t.element_bytes == 1;
}
// V is the transposed FP8 tile (V^T, K-major) unless P V runs in bf16, which reads V N-major as 16-bit does.
FA_CONFIG_FN bool v_transposed(const FwdTunables& t) {
  return is_fp8(t) && !t.pv_bf16;
}
// V^T made in the kernel from row-major V tiles (kTransposeV = 1), not by the transpose launch.
FA_CONFIG_FN bool transposes_v_in_kernel(const FwdTunables& t) {
  return v_transposed(t) && t.transpose_v == 1;
}
// Bytes of one P V operand element (P and V): FP8 codes, or 16-bit (bf16 P V, and the 16-bit family).
FA_CONFIG_FN int pv_element_bytes(const FwdTunables& t) {
  return v_transposed(t) ? 1 : 2;
}

// Bytes of the shared tiles, each a multiple of the swizzle atom (8 rows x the span).
FA_CONFIG_FN int q_tile_bytes(const FwdTunables& t) {
  return block_m(t) * t.head_dim * t.element_bytes;
}
FA_CONFIG_FN int kv_tile_bytes(const FwdTunables& t) {  // K's tile (and V's but with bf16 P V)
  return t.block_n * t.head_dim * t.element_bytes;
}
FA_CONFIG_FN int v_tile_bytes(const FwdTunables& t) {
  return t.block_n * t.head_dim * pv_element_bytes(t);
}
// O (16-bit) is staged for its TMA store in the Q tile when Q is 16-bit too and kSeparateO is off; FP8 Q
// has half the bytes, so FP8 stages O in a tile of its own (kBlockM x D bf16), as kSeparateO does.
FA_CONFIG_FN int o_stage_bytes(const FwdTunables& t) {
  return is_fp8(t) || t.separate_o ? block_m(t) * t.head_dim * 2 : 0;
}
FA_CONFIG_FN int barrier_count(const FwdTunables& t) {
  return 2 + 4 * t.stages;
}  // Q full/empty, K and V each
// kTransposeV = 1: the staging ring of row-major V tiles, kStages slots of kBlockN x D codes (a K tile's
// bytes: the same TMA boxes), one slot per V^T slot so the copy of V_{j+1} lands while V_j is transposed.
// Its full/empty barriers and, per slot, the word that tells the transposers whether a tile landed there
// or the CTA has no more key blocks (ints, padded to the barriers' 8 bytes).
FA_CONFIG_FN int staged_v_bytes(const FwdTunables& t) {
  return transposes_v_in_kernel(t) ? t.stages * t.block_n * t.head_dim : 0;
}
FA_CONFIG_FN int staged_v_flag_bytes(int stages) {
  return (4 * stages + 7) / 8 * 8;
}
FA_CONFIG_FN int staged_v_barrier_bytes(const FwdTunables& t) {
  return transposes_v_in_kernel(t) ? 8 * 2 * t.stages + staged_v_flag_bytes(t.stages) : 0;
}
FA_CONFIG_FN int shared_bytes(const FwdTunables& t) {
  return kSharedAlignSlack + q_tile_bytes(t) + t.stages * (kv_tile_bytes(t) + v_tile_bytes(t)) +
         o_stage_bytes(t) + staged_v_bytes(t) + 8 * barrier_count(t) + kTileSlotBytes +
         staged_v_barrier_bytes(t);
}

// fp32 registers one consumer thread holds for O (D/2), S (kBlockN/2) and, with intra-warpgroup overlap,
// P (kBlockN/4: two 16-bit values per register, bf16 P V included; FP8 kBlockN/8: four codes per
// register), live together with the next block's S. Without overlap P is packed from S as S dies: ptxas
// (CUDA 13.0) fits FP8 d128 x 256 and d256 x 128 that way in 240 registers without spills, which with overlap
// spill 96 and 32 bytes.
FA_CONFIG_FN int accumulator_registers(const FwdTunables& t) {
  const int p_registers = t.intra_wg_overlap ? t.block_n / (pv_element_bytes(t) == 1 ? 8 : 4) : 0;
  return t.head_dim / 2 + t.block_n / 2 + p_registers;
}

// The first rule `t` breaks, in words, or nullptr.
FA_CONFIG_FN const char* violation(const FwdTunables& t) {
  if (t.head_dim != 64 && t.head_dim != 128 && t.head_dim != 256) return "head dim must be 64, 128 or 256";
  if (t.element_bytes != 2 && t.element_bytes != 1)
    return "fa3_sm90 runs 16-bit (fp16, bf16) and 8-bit (fp8_e4m3, fp8_e5m2) elements";
  if (t.block_n < 64 || t.block_n > 256 || t.block_n % 16 != 0)
    return "kBlockN must be a multiple of 16 in 64..256 (wgmma N, 16-key P.V steps, TMA box <= 256 rows)";
  if (is_fp8(t) && t.block_n != 64 && t.block_n != 128 && t.block_n != 256)
    return "FP8 kBlockN must be 64, 128 or 256 (a V^T tile row of kBlockN bytes is one 64-byte or whole "
           "128-byte swizzle panels)";
  if (t.consumers < 1 || t.consumers > 3) return "kConsumers (consumer warpgroups) must be 1, 2 or 3";
  if (t.stages < 2 || t.stages > 3) return "kStages must be 2 or 3";
  if (t.ping_pong != 0 && t.ping_pong != 1) return "kPingPong is 0 or 1";
  if (t.ping_pong == 1 && t.consumers < 2) return "ping-pong needs at least two consumer warpgroups";
  if (t.intra_wg_overlap != 0 && t.intra_wg_overlap != 1) return "kIntraWgOverlap is 0 or 1";
  if (t.persistent != kOneCtaPerTile && t.persistent != kStaticTiles && t.persistent != kDynamicTiles)
    return "kPersistent is 0 (one CTA per tile), 1 (static tile order) or 2 (dynamic: a tile counter)";
  if (t.separate_o != 0 && t.separate_o != 1) return "kSeparateO is 0 or 1";
  if (t.pv_bf16 != 0 && t.pv_bf16 != 1) return "kPvBf16 is 0 or 1";
  if (t.pv_bf16 == 1 && !is_fp8(t)) return "bf16 P.V (kPvBf16) is an option of the FP8 forward";
  if (t.transpose_v != 0 && t.transpose_v != 1)
    return "kTransposeV is 0 (the transpose launch) or 1 (in the kernel)";
  if (t.transpose_v == 1 && !v_transposed(t))
    return "the in-kernel V transpose (kTransposeV) is an option of the FP8 forward with FP8 P.V (V^T)";
  if (accumulator_registers(t) > consumer_registers(t.consumers, t.transpose_v) - kConsumerRegisterSlack)
    return "O, S and P need more registers than a consumer thread gets (spills)";
  if (shared_bytes(t) > kMaxSharedBytes) return "shared memory over 227 KiB";
  return nullptr;
}

}  // namespace fa3
