#pragma once
// flash_decode (the split-KV forward, Flash-Decoding): its tunables, the constraints between them, the
// shared-memory arithmetic and the grid, in ONE place that both compilers read (as fa3_sm90_config.h): the
// kernels (NVRTC) static_assert `violation(...) == nullptr` and lay out shared memory with these functions;
// the host (g++, device/families/flash_decode.cpp) prunes with the same `violation` and launches with the
// same `shared_bytes` and grid. Plain constexpr C++; its one header (fa_arch.h) is the same.
#include "fa_arch.h"

namespace fdec {

constexpr int kWarpThreads = fa::kWarpSize;
constexpr int kMaxSharedBytes = fa::kMaxSharedBytesPerBlock;
constexpr int kStages = 2;  // each warp's K/V ring: the next block loads while this one runs
constexpr int kMaxSplits = 128;
// fp32 accumulators a thread may hold (O: kBlockM/16 x D/2, S: kBlockM/16 x kBlockN/2) below the 255
// registers of a thread, with room for addresses and the softmax state (d256 needs 128 for O alone).
constexpr int kMaxAccumulatorRegisters = 160;

struct Tunables {
  int head_dim;       // 64, 128, 256
  int element_bytes;  // 2 (fp16, bf16)
  int block_m;        // packed query rows per CTA (query heads of a GQA group x query rows): 16, 32, 64
  int block_n;        // keys per block: a multiple of 16 (one P.V k-step), 16..128
  int warps;          // warps per CTA, each walking its own range of key blocks: 1, 2, 4, 8
  int splits;         // CTAs the keys of one (batch, kv head, row block) are split over: 1..kMaxSplits
};

// Every (split, warp) pair writes one partial (O, m, l) per row; the combine kernel merges them.
FA_CONFIG_FN int partials(const Tunables& t) {
  return t.splits * t.warps;
}
FA_CONFIG_FN int threads(const Tunables& t) {
  return kWarpThreads * t.warps;
}
// Rows of one (batch, kv head): the h_q / h_kv query heads that read it, times n_q (GQA packing).
FA_CONFIG_FN int packed_rows(int heads_q, int heads_kv, int seqlen_q) {
  return heads_q / heads_kv * seqlen_q;
}
FA_CONFIG_FN int row_blocks(const Tunables& t, int heads_q, int heads_kv, int seqlen_q) {
  return (packed_rows(heads_q, heads_kv, seqlen_q) + t.block_m - 1) / t.block_m;
}
// Key blocks per partial: the key blocks are cut into partials() contiguous ranges of this many.
FA_CONFIG_FN int blocks_per_partial(const Tunables& t, int key_blocks) {
  return (key_blocks + partials(t) - 1) / partials(t);
}

FA_CONFIG_FN int q_tile_bytes(const Tunables& t) {
  return t.block_m * t.head_dim * t.element_bytes;
}
FA_CONFIG_FN int kv_tile_bytes(const Tunables& t) {
  return t.block_n * t.head_dim * t.element_bytes;
}
// A warp's ring: kStages slots of (K, V).
FA_CONFIG_FN int warp_ring_bytes(const Tunables& t) {
  return kStages * 2 * kv_tile_bytes(t);
}
FA_CONFIG_FN int shared_bytes(const Tunables& t) {
  return q_tile_bytes(t) + t.warps * warp_ring_bytes(t);
}
FA_CONFIG_FN int accumulator_registers(const Tunables& t) {
  return t.block_m / 16 * (t.head_dim / 2 + t.block_n / 2);
}
// The combine kernel: one CTA per row, each thread two adjacent columns of O.
FA_CONFIG_FN int combine_threads(int head_dim) {
  return head_dim / 2;
}

// The first rule `t` breaks, in words, or nullptr.
FA_CONFIG_FN const char* violation(const Tunables& t) {
  if (t.head_dim != 64 && t.head_dim != 128 && t.head_dim != 256) return "head dim must be 64, 128 or 256";
  if (t.element_bytes != 2) return "flash_decode runs 16-bit elements (fp16, bf16)";
  if (t.block_m != 16 && t.block_m != 32 && t.block_m != 64) return "kBlockM must be 16, 32 or 64";
  if (t.block_n < 16 || t.block_n > 128 || t.block_n % 16 != 0)
    return "kBlockN must be a multiple of 16 in 16..128 (16-key P.V steps)";
  if (t.warps != 1 && t.warps != 2 && t.warps != 4 && t.warps != 8) return "kNWarps must be 1, 2, 4 or 8";
  if (t.splits < 1 || t.splits > kMaxSplits) return "kSplits must be in 1..128";
  if (t.block_m * t.head_dim / 8 % threads(t) != 0) return "the Q tile's 16-byte copies must split evenly";
  if (accumulator_registers(t) > kMaxAccumulatorRegisters)
    return "O and S need more registers than a thread has (spills)";
  if (shared_bytes(t) > kMaxSharedBytes) return "shared memory over 227 KiB";
  return nullptr;
}

}  // namespace fdec
