#pragma once
// fa3_sm90_bwd: the backward's tunables, the constraints between them and its shared-memory arithmetic, in
// ONE place that both compilers read (as fa3_sm90_config.h does for the forward, whose register split and
// constants it reuses): the kernel (NVRTC) static_asserts `bwd_violation(...) == nullptr` and checks its
// layout against `bwd_shared_bytes`; the host (device/families/fa3_sm90_bwd.cpp) prunes with the same rules
// and sizes the launch with the same arithmetic.
//
// Work split of one CTA (kBlockN keys of one key/value head): each consumer warpgroup owns 64 key rows
// (a wgmma m64 tile of S^T = K Q^T) of one "key group" and one slice of the head dim for dK and dV. With
// kBlockN = 64 x consumers every warpgroup has its own keys and the whole head dim; with two warpgroups on
// 64 keys (d256: dK + dV of 64 keys x 256 columns would be 256 registers per thread) each computes S^T and
// dP^T for the same keys (the products repeated, the results identical) and keeps half of dK, dV.
#include "fa3_sm90_config.h"

namespace fa3 {

constexpr int kKeysPerConsumer = 64;  // one wgmma m64 tile of S^T per warpgroup
constexpr int kDqChunkColumns = 64;   // dQ = dS K is issued in m64 n64 items (32 accumulators each)
// Registers a backward consumer thread needs beyond its accumulators (descriptors, loop state, the
// P/dS arithmetic). An estimate for pruning before compiling; ptxas decides (the compile test checks the
// defaults for spills).
constexpr int kBwdConsumerRegisterSlack = 32;

// kDqMode: how dQ_i += dS K_j reaches the fp32 accumulator in device memory.
constexpr int kDqAtomic = 0;         // fp32 REDs from registers, in whatever order the CTAs run
constexpr int kDqDeterministic = 1;  // the same REDs, ordered per query block by a semaphore: same bits
constexpr int kDqBulk = 2;           // staged in shared memory, added by one TMA bulk reduce-add per item
// kDqBulk's staging rows: 64 floats + 8 of padding. A warp's 8-byte stores go out per half-warp (4 rows x 4
// lanes), and 288-byte rows put those 4 rows 8 banks apart: conflict-free. 288 is a multiple of 16, as a
// bulk copy's source must be.
constexpr int kDqStageRowBytes = 288;

// kDqBulk's accumulator: per (batch, query head), tiles of one dQ item (64 query rows x 64 columns) laid out
// exactly as the staging tile, padding included, so that an item reaches it as ONE contiguous bulk
// reduce-add of 18 KiB (64 copies of one 256-byte row each, issued by one thread, ran at 0.58x the REDs:
// H200, 2026-12-01 session 4). Row tile r, column chunk c of a head is tile r * (d / 64) + c; the query
// rows are padded to a multiple of 64 (the padding and the 8 floats per row past 64 are added to but never
// read). The preprocess zeroes and the convert kernel reads through offset().
struct BwdDqTiles {
  static constexpr int kRows = kRowsPerConsumer;
  static constexpr int kColumns = kDqChunkColumns;
  static constexpr int kRowFloats = kDqStageRowBytes / 4;
  static constexpr int kTileFloats = kRows * kRowFloats;
  FA_CONFIG_FN static long long head_floats(int seqlen_q, int head_dim) {
    return static_cast<long long>((seqlen_q + kRows - 1) / kRows) * (head_dim / kColumns) * kTileFloats;
  }
  // Element (row, col) of head bh.
  template <int kHeadDim>
  FA_CONFIG_FN static long long offset(long long bh, int seqlen_q, int row, int col) {
    return bh * head_floats(seqlen_q, kHeadDim) +
           (static_cast<long long>(row / kRows) * (kHeadDim / kColumns) + col / kColumns) * kTileFloats +
           (row % kRows) * kRowFloats + col % kColumns;
  }
};

struct BwdTunables {
  int head_dim;       // 64, 128, 256
  int element_bytes;  // 2 (fp16, bf16)
  int block_m;        // queries per step (the N of S^T): 64 or 128
  int block_n;        // keys per CTA: 64 x key groups
  int consumers;      // consumer warpgroups, 1 or 2
  int stages;         // Q/dO (+ LSE, D) shared-memory slots, 1 or 2
  int dq_mode;        // kDqAtomic, kDqDeterministic or kDqBulk
};

FA_CONFIG_FN int bwd_threads(const BwdTunables& t) {
  return kWarpgroupThreads * (1 + t.consumers);
}
FA_CONFIG_FN int bwd_key_groups(const BwdTunables& t) {
  return t.block_n / kKeysPerConsumer;
}
// Warpgroups sharing one key group, each with 1/d_split of dK and dV's columns.
FA_CONFIG_FN int bwd_d_split(const BwdTunables& t) {
  return t.consumers / bwd_key_groups(t);
}
FA_CONFIG_FN int bwd_dkv_columns(const BwdTunables& t) {
  return t.head_dim / bwd_d_split(t);
}
// dQ items (64 query rows x 64 columns) of one step, and how many each consumer warpgroup issues.
FA_CONFIG_FN int bwd_dq_items(const BwdTunables& t) {
  return (t.block_m / kRowsPerConsumer) * (t.head_dim / kDqChunkColumns);
}
FA_CONFIG_FN int bwd_dq_items_per_consumer(const BwdTunables& t) {
  return bwd_dq_items(t) / t.consumers;
}

// Shared memory, each tile a multiple of the 1024-byte swizzle atom: K and V (kBlockN rows), the Q and dO
// slots (kBlockM rows), two dS^T buffers (kBlockN keys x kBlockM queries, 16-bit: one buffer per step
// parity, so one barrier per step suffices), kDqBulk's dQ staging tiles, the LSE (log2 units) and D rows
// of each slot, the barriers.
FA_CONFIG_FN int bwd_kv_tile_bytes(const BwdTunables& t) {
  return t.block_n * t.head_dim * t.element_bytes;
}
FA_CONFIG_FN int bwd_q_tile_bytes(const BwdTunables& t) {
  return t.block_m * t.head_dim * t.element_bytes;
}
FA_CONFIG_FN int bwd_ds_tile_bytes(const BwdTunables& t) {
  return t.block_n * t.block_m * t.element_bytes;
}
constexpr int kBwdDsBuffers = 2;
FA_CONFIG_FN int bwd_stats_bytes(const BwdTunables& t) {
  return 2 * t.block_m * 4;  // LSE and D of one slot, fp32
}
// kDqBulk: one staging tile (64 rows of one dQ item) per consumer warpgroup.
FA_CONFIG_FN int bwd_dq_stage_bytes(const BwdTunables& t) {
  return t.dq_mode == kDqBulk ? t.consumers * kRowsPerConsumer * kDqStageRowBytes : 0;
}
FA_CONFIG_FN int bwd_barrier_count(const BwdTunables& t) {
  return 1 + 2 * t.stages;  // K/V full; Q/dO full and empty per slot
}
FA_CONFIG_FN int bwd_shared_bytes(const BwdTunables& t) {
  return kSharedAlignSlack + 2 * bwd_kv_tile_bytes(t) + 2 * t.stages * bwd_q_tile_bytes(t) +
         kBwdDsBuffers * bwd_ds_tile_bytes(t) + bwd_dq_stage_bytes(t) + t.stages * bwd_stats_bytes(t) +
         8 * bwd_barrier_count(t);
}

// fp32 registers a consumer thread holds at its peak (S^T and dP^T computed, dK and dV live), or after
// them (P and dS packed for the dK/dV products, one dQ item).
FA_CONFIG_FN int bwd_accumulator_registers(const BwdTunables& t) {
  const int dkv = bwd_dkv_columns(t);  // dK and dV: dkv / 2 floats each
  const int scores = t.block_m;        // S^T and dP^T: block_m / 2 floats each
  const int after = t.block_m / 2 + kDqChunkColumns / 2;
  return dkv + (scores > after ? scores : after);
}

// The first rule `t` breaks, in words, or nullptr.
FA_CONFIG_FN const char* bwd_violation(const BwdTunables& t) {
  if (t.head_dim != 64 && t.head_dim != 128 && t.head_dim != 256) return "head dim must be 64, 128 or 256";
  if (t.element_bytes != 2) return "fa3_sm90_bwd runs 16-bit elements (fp16, bf16)";
  if (t.block_m != 64 && t.block_m != 128) return "kBlockM must be 64 or 128 (query rows per step)";
  if (t.block_n != 64 && t.block_n != 128) return "kBlockN must be 64 or 128 (64 keys per key group)";
  if (t.consumers != 1 && t.consumers != 2) return "kConsumers (consumer warpgroups) must be 1 or 2";
  if (t.consumers % bwd_key_groups(t) != 0)
    return "every 64-key group of kBlockN needs its own consumer warpgroup (kBlockN <= 64 x kConsumers)";
  if (bwd_dkv_columns(t) % (kPanelBytes / t.element_bytes) != 0)
    return "each warpgroup's slice of dK and dV must be whole 64-column panels";
  if (bwd_dq_items(t) % t.consumers != 0)
    return "the dQ items (64 rows x 64 columns) must split evenly over the consumer warpgroups";
  if (t.stages != 1 && t.stages != 2) return "kStages must be 1 or 2";
  if (t.dq_mode != kDqAtomic && t.dq_mode != kDqDeterministic && t.dq_mode != kDqBulk)
    return "kDqMode is 0 (REDs), 1 (deterministic REDs) or 2 (TMA bulk reduce-add)";
  if (bwd_accumulator_registers(t) > consumer_registers(t.consumers) - kBwdConsumerRegisterSlack)
    return "dK, dV, S^T and dP^T need more registers than a consumer thread gets (spills)";
  if (bwd_shared_bytes(t) > kMaxSharedBytes) return "shared memory over 227 KiB";
  return nullptr;
}

}  // namespace fa3
