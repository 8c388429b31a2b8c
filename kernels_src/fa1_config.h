#pragma once
// fa1 (the FlashAttention-1 loop order, fa1_fwd.cu): its tunables, the rules between them, the state's row
// padding and the shared memory, in ONE place both compilers read (as naive_config.h): the kernel (NVRTC)
// static_asserts `violation(...) == nullptr` and indexes its O/m/l state with `state_rows_per_head`; the
// host (g++, device/families/fa1.cpp) prunes with the same `violation` and sizes the state and the shared
// memory with the same functions.
#include "fa_arch.h"

namespace fa1 {

constexpr int kElementBytes = 2;  // Q, K, V and O: fp16 or bf16
// O + S accumulator registers a thread may hold (4 floats per 16 x 8 tile). fa2_sm80 allows 192; here the
// O loads in flight at the start of a step add to them: at 192 (d128, 2 row tiles per warp, 64-key
// chunks) ptxas spilled 12-364 bytes at 255 registers (CUDA 13.0); at <= 160 every config compiles without
// spills (tests/kernels_src/fa1_compile_test.cpp).
constexpr int kMaxAccumulatorRegisters = 160;
// Chunks of kChunkN keys per key block: the kernel waits on 2 cp.async groups a chunk, and 8 chunks keep
// that chain of waits (cp.async.wait_group takes an immediate) short.
constexpr int kMaxChunksPerBlock = 8;
constexpr int kMaxRowTilesPerWarp = 4;  // 16-row tiles per warp: 4 x (D/8 + kChunkN/8) x 4 floats at most
// O/m/l state rows per (batch, head): N_q rounded up to whole 16-row tiles, so a warp's tile is whole in
// the registers' fragment order (fa_fragment_state.cuh) whatever N_q is.
constexpr int kStateRowTile = 16;

struct Tunables {
  int head_dim;  // 64, 128, 256
  int block_m;   // kBlockM: query rows per CTA
  int block_n;   // kBlockN: keys per launch, all in shared memory
  int chunk_n;   // kChunkN: keys per S tile in registers
  int warps;     // kNWarps
};

FA_CONFIG_FN int row_tiles_per_warp(const Tunables& t) {
  return t.block_m / t.warps / 16;
}
FA_CONFIG_FN int threads(const Tunables& t) {
  return fa::kWarpSize * t.warps;
}
FA_CONFIG_FN int accumulator_registers(const Tunables& t) {
  return 4 * row_tiles_per_warp(t) * (t.head_dim / 8 + t.chunk_n / 8);
}
// Q's block and K_j, V_j whole (kBlockN rows each).
FA_CONFIG_FN int shared_bytes(const Tunables& t) {
  return (t.block_m + 2 * t.block_n) * t.head_dim * kElementBytes;
}
FA_CONFIG_FN int state_rows_per_head(int seqlen_q) {
  return (seqlen_q + kStateRowTile - 1) / kStateRowTile * kStateRowTile;
}

FA_CONFIG_FN const char* violation(const Tunables& t) {
  if (t.head_dim != 64 && t.head_dim != 128 && t.head_dim != 256) return "head dim must be 64, 128 or 256";
  if (t.block_m <= 0 || t.block_n <= 0 || t.chunk_n <= 0 || t.warps <= 0)
    return "kBlockM, kBlockN, kChunkN, kNWarps must be set";
  if (t.block_m % (16 * t.warps) != 0 || row_tiles_per_warp(t) > kMaxRowTilesPerWarp)
    return "each warp owns 1 to 4 whole 16-row tiles";
  if (t.chunk_n % 16 != 0) return "kChunkN must be a multiple of 16 (whole 16-key P.V steps)";
  if (t.block_n % t.chunk_n != 0 || t.block_n / t.chunk_n > kMaxChunksPerBlock)
    return "kBlockN must be 1 to 8 whole kChunkN chunks";
  if ((t.chunk_n * t.head_dim / 8) % threads(t) != 0 || (t.block_m * t.head_dim / 8) % threads(t) != 0)
    return "tile copies must split evenly over the threads";
  if (accumulator_registers(t) > kMaxAccumulatorRegisters) return "accumulators over the register budget";
  if (shared_bytes(t) > fa::kMaxSharedBytesPerBlock) return "shared memory over 227 KiB";
  return nullptr;
}

}  // namespace fa1
