#pragma once
// fa3_sm90 forward: its tunables, the constraints between them and its shared-memory arithmetic, in ONE
// place that both compilers read: the kernel (NVRTC) static_asserts `violation(...) == nullptr` and takes
// its layout from `SharedLayout`; the host (g++, tuner/families/fa3_sm90.cpp) prunes with the same
// `violation` and sizes the launch with the same `shared_bytes`. Plain constexpr C++, no headers.

// The functions below are called by both compilers: NVRTC accepts no unannotated (host) function, g++ knows
// no execution-space annotation.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FA3_CONFIG_FN constexpr __host__ __device__
#else
#define FA3_CONFIG_FN constexpr
#endif

namespace fa3 {

constexpr int kWarpgroupThreads = 128;
constexpr int kRowsPerConsumer = 64;  // one wgmma m64 row tile per consumer warpgroup (as FlashAttention-3)
constexpr int kMaxSharedBytes = 227 * 1024;  // sm_90's opt-in shared memory per block
constexpr int kSharedAlignSlack = 1024;      // the dynamic base is rounded up to the 1024-byte swizzle atom
constexpr int kPanelBytes = 128;             // 128-byte swizzle: tiles are stored as 128-byte-wide panels
constexpr int kRegisterFile = 65536;         // 32-bit registers per SM
// Registers a consumer thread needs beyond the accumulators (addresses, softmax state, loop counters):
// ptxas for d128 128x128 used ~40 more than O + S + P (CUDA 13.0, sm_90a).
constexpr int kConsumerRegisterSlack = 40;

struct FwdTunables {
  int head_dim;          // 64, 128, 256
  int element_bytes;     // 2 (fp16, bf16)
  int block_n;           // keys per block: a multiple of 16 (the P.V k-step), 64..256
  int consumers;         // consumer warpgroups, 1..3; kBlockM = 64 * consumers
  int stages;            // K/V shared-memory slots, 2..3
  int ping_pong;         // 0/1: consumer warpgroups take turns issuing their products (needs >= 2)
  int intra_wg_overlap;  // 0/1: S_{j+1} = Q K_{j+1} is issued before the softmax of block j
  int persistent;        // 0/1: one CTA per SM walking the tiles, or one CTA per tile
};

FA3_CONFIG_FN int block_m(const FwdTunables& t) {
  return kRowsPerConsumer * t.consumers;
}
FA3_CONFIG_FN int threads(const FwdTunables& t) {
  return kWarpgroupThreads * (1 + t.consumers);
}

// setmaxnreg split. A CTA keeps the registers it was launched with (the cap at entry: 65536 / threads,
// rounded down to 8, at most 255): setmaxnreg only moves them between its warpgroups, and an increase that
// the CTA's own allocation cannot cover waits forever (seen on the H200: 32 + 2 x 240 > 3 x 168 hung the
// consumers in setmaxnreg.inc until the producer's barrier timeout trapped). So the producer warpgroup
// keeps kProducerRegisters and the consumers share the rest, rounded down to setmaxnreg's multiple of 8:
// 2 consumers (3 x 168 = 504): 24 + 2 x 240; 3 consumers (4 x 128 = 512): 32 + 3 x 160. One consumer
// warpgroup already has the 255-register cap at entry and skips the exchange.
FA3_CONFIG_FN int entry_registers(int consumers) {
  const int per_thread = kRegisterFile / (kWarpgroupThreads * (1 + consumers)) / 8 * 8;
  return per_thread > 255 ? 255 : per_thread;
}
FA3_CONFIG_FN int producer_registers(int consumers) {
  return consumers == 2 ? 24 : 32;
}
FA3_CONFIG_FN int consumer_registers(int consumers) {
  if (consumers == 1) return entry_registers(1);
  return (entry_registers(consumers) * (1 + consumers) - producer_registers(consumers)) / consumers / 8 * 8;
}

// Bytes of the shared tiles, each a multiple of the 1024-byte swizzle atom (rows x 128-byte panels).
FA3_CONFIG_FN int q_tile_bytes(const FwdTunables& t) {
  return block_m(t) * t.head_dim * t.element_bytes;
}
FA3_CONFIG_FN int kv_tile_bytes(const FwdTunables& t) {
  return t.block_n * t.head_dim * t.element_bytes;
}
FA3_CONFIG_FN int barrier_count(const FwdTunables& t) {
  return 2 + 4 * t.stages;
}  // Q full/empty, K and V each
FA3_CONFIG_FN int shared_bytes(const FwdTunables& t) {
  return kSharedAlignSlack + q_tile_bytes(t) + 2 * t.stages * kv_tile_bytes(t) + 8 * barrier_count(t);
}

// fp32 registers one consumer thread holds for O (D/2), S (kBlockN/2) and P (kBlockN/4: two 16-bit values
// per register); with intra-warpgroup overlap S of the next block and P of this one are live together.
FA3_CONFIG_FN int accumulator_registers(const FwdTunables& t) {
  return t.head_dim / 2 + t.block_n / 2 + t.block_n / 4;
}

// The first rule `t` breaks, in words, or nullptr.
FA3_CONFIG_FN const char* violation(const FwdTunables& t) {
  if (t.head_dim != 64 && t.head_dim != 128 && t.head_dim != 256) return "head dim must be 64, 128 or 256";
  if (t.element_bytes != 2) return "fa3_sm90 runs 16-bit elements (fp16, bf16)";
  if (t.block_n < 64 || t.block_n > 256 || t.block_n % 16 != 0)
    return "kBlockN must be a multiple of 16 in 64..256 (wgmma N, 16-key P.V steps, TMA box <= 256 rows)";
  if (t.consumers < 1 || t.consumers > 3) return "kConsumers (consumer warpgroups) must be 1, 2 or 3";
  if (t.stages < 2 || t.stages > 3) return "kStages must be 2 or 3";
  if (t.ping_pong != 0 && t.ping_pong != 1) return "kPingPong is 0 or 1";
  if (t.ping_pong == 1 && t.consumers < 2) return "ping-pong needs at least two consumer warpgroups";
  if (t.intra_wg_overlap != 0 && t.intra_wg_overlap != 1) return "kIntraWgOverlap is 0 or 1";
  if (t.persistent != 0 && t.persistent != 1) return "kPersistent is 0 or 1";
  if (accumulator_registers(t) > consumer_registers(t.consumers) - kConsumerRegisterSlack)
    return "O, S and P need more registers than a consumer thread gets (spills)";
  if (shared_bytes(t) > kMaxSharedBytes) return "shared memory over 227 KiB";
  return nullptr;
}

}  // namespace fa3
