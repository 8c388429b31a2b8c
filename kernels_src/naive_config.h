#pragma once
// naive (standard attention through device memory): its tunables, the constraints between them, the
// scratch layout and the shared-memory arithmetic, in ONE place both compilers read (as
// flash_decode_config.h): the kernels (NVRTC) static_assert `violation(...) == nullptr` and lay out shared
// memory with these functions; the host (g++, device/families/naive.cpp) prunes with the same `violation`,
// sizes S and P with `scratch_row_stride` and launches with the same `*_shared_bytes`.
#include "fa_arch.h"

namespace naive {

constexpr int kElementBytes = 2;  // Q, K, V, O and P: fp16 or bf16
constexpr int kBlockM = 128;      // query rows per CTA, both GEMMs
constexpr int kScoreCols = 128;   // keys per S tile (S = Q K^T)
constexpr int kPvKeys = 64;       // keys per k-step slab of O = P V: one 128-byte swizzle group of a P row
// Rows of S and P are padded to a multiple of the S tile: every tile is whole (no column bounds in the
// S store), every row starts 16-byte aligned for the softmax's and P V's vector loads, and the padding
// holds S = -inf (the tail mask), so P = 0 there. Headline n are powers of two: no padding at all.
constexpr int kKeyAlign = kScoreCols;
// The softmax keeps a row of S in shared memory (PyTorch's cunn_SoftMaxForwardSmem does the same) when it
// fits in this much, so S is read from device memory once; longer rows are read three times (max, sum,
// write). 64 KiB: n_k <= 32768 with 16-bit S, 16384 with fp32 S; three 64 KiB CTAs still fit an SM.
constexpr int kRowCacheBytes = 64 * 1024;
// fp32 accumulators a thread may hold: 128 leaves room for operands and addresses below 255 registers.
constexpr int kMaxAccumulators = 128;

struct Tunables {
  int head_dim;    // 64, 128, 256
  int warps;       // per CTA of both GEMMs: 4 or 8
  int stages;      // cp.async ring depth of both GEMMs: 2 or 3
  int score_bits;  // S in device memory: 16 (the input type, PyTorch's math path) or 32 (fp32)
};

FA_CONFIG_FN int scratch_row_stride(int seqlen_k) {
  return (seqlen_k + kKeyAlign - 1) / kKeyAlign * kKeyAlign;
}
FA_CONFIG_FN int score_bytes(int score_bits) {
  return score_bits / 8;
}

// S = Q K^T: warps as kScoreWarpsM x 2 (64 keys each); 4 warps: 64 rows each, 8 warps: 32 rows each.
FA_CONFIG_FN int score_warps_n(const Tunables&) {
  return 2;
}
FA_CONFIG_FN int score_warps_m(const Tunables& t) {
  return t.warps / score_warps_n(t);
}
FA_CONFIG_FN int score_accumulators(const Tunables& t) {
  return kBlockM / score_warps_m(t) * (kScoreCols / score_warps_n(t)) / fa::kWarpSize;
}
// The Q tile, resident, and `stages` K tiles (each kScoreCols x D).
FA_CONFIG_FN int scores_shared_bytes(const Tunables& t) {
  return (1 + t.stages) * kBlockM * t.head_dim * kElementBytes;
}

// O = P V: warps split the rows (4 warps: 32 each); 8 warps split D in two halves where a half is whole
// 128-byte groups of a V row (D >= 128, so the swizzle phase of a half is the row's), else the rows
// (16 each at D = 64).
FA_CONFIG_FN int output_warps_n(const Tunables& t) {
  return t.warps == 8 && t.head_dim >= 128 ? 2 : 1;
}
FA_CONFIG_FN int output_warps_m(const Tunables& t) {
  return t.warps / output_warps_n(t);
}
FA_CONFIG_FN int output_accumulators(const Tunables& t) {
  return kBlockM / output_warps_m(t) * (t.head_dim / output_warps_n(t)) / fa::kWarpSize;
}
// `stages` slots, each a P slab (kBlockM x kPvKeys) and a V slab (kPvKeys x D).
FA_CONFIG_FN int output_shared_bytes(const Tunables& t) {
  return t.stages * (kBlockM * kPvKeys + kPvKeys * t.head_dim) * kElementBytes;
}

// The softmax's row cache: the whole padded row of S, or nothing (then it reads device memory again).
FA_CONFIG_FN int softmax_shared_bytes(int seqlen_k, int score_bits) {
  const int bytes = scratch_row_stride(seqlen_k) * score_bytes(score_bits);
  return bytes <= kRowCacheBytes ? bytes : 0;
}

// The first rule `t` breaks, in words, or nullptr.
FA_CONFIG_FN const char* violation(const Tunables& t) {
  if (t.head_dim != 64 && t.head_dim != 128 && t.head_dim != 256) return "head dim must be 64, 128 or 256";
  if (t.warps != 4 && t.warps != 8) return "kNWarps must be 4 or 8";
  if (t.stages != 2 && t.stages != 3) return "kStages must be 2 or 3";
  if (t.score_bits != 16 && t.score_bits != 32) return "kScoreBits must be 16 or 32";
  if (score_accumulators(t) > kMaxAccumulators || output_accumulators(t) > kMaxAccumulators)
    return "a warp's tile needs more than 128 fp32 accumulators per thread (spills): more warps";
  if (scores_shared_bytes(t) > fa::kMaxSharedBytesPerBlock ||
      output_shared_bytes(t) > fa::kMaxSharedBytesPerBlock)
    return "shared memory over 227 KiB: fewer stages";
  return nullptr;
}

}  // namespace naive
