#pragma once
// fa3_sm90 forward: the compile-time layout of one config (tile sizes, shared-memory offsets, barriers),
// checked against fa3_sm90_config.h, and the per-tile work that the producer and the consumers derive
// alike.
#include "fa3_sm90_config.h"
#include "fa_block_range.cuh"
#include "fa_params.h"
#include "fa_tile_scheduler.cuh"
#include "fa_tma_pipeline.cuh"

namespace fa3 {

// Named barriers (0 is __syncthreads): the ping-pong turn of consumer w, and its epilogue.
constexpr int kTurnBarrier = 1;        // 1..3
constexpr int kEpilogueBarrier = 4;    // 4..6
constexpr int kOColumnsPerPanel = 64;  // 16-bit O columns in one 128-byte panel (the O map's inner box)

// A tile stored as TMA writes it: panels of `rows` x kSpan bytes (kSpan = the swizzle), each panel one box.
template <int kRows, int kRowBytes>
struct PanelTile {
  static constexpr int kSpan = swizzle_span(kRowBytes);
  static constexpr int kPanels = kRowBytes / kSpan;
  static constexpr int kPanelBytes = kRows * kSpan;
  static_assert(kSpan == 64 || kSpan == 128, "wgmma tiles here are 64- or 128-byte swizzled");
  static_assert(kPanels * kSpan == kRowBytes, "a tile row is whole panels");
};

template <int kElementBytes_, int kHeadDim_, int kBlockN_, int kConsumers_, int kStages_, int kPingPong_,
          int kIntraWgOverlap_, int kPersistent_, int kSeparateO_, int kPvBf16_ = 0, int kTransposeV_ = 0>
struct Fwd {
  static constexpr FwdTunables kTunables{kHeadDim_,   kElementBytes_, kBlockN_,         kConsumers_,
                                         kStages_,    kPingPong_,     kIntraWgOverlap_, kPersistent_,
                                         kSeparateO_, kPvBf16_,       kTransposeV_};
  static_assert(violation(kTunables) == nullptr, "fa3_sm90 config breaks a rule of fa3_sm90_config.h");

  static constexpr int kBlockM = block_m(kTunables);
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kStages = kStages_;
  static constexpr int kConsumers = kConsumers_;
  static constexpr bool kPingPong = kPingPong_ != 0;
  static constexpr bool kIntraWgOverlap = kIntraWgOverlap_ != 0;
  static constexpr bool kDynamicTiles = kPersistent_ == fa3::kDynamicTiles;
  // Q is released when the tile's products are done, before its epilogue (O has a tile of its own).
  static constexpr bool kEarlyQRelease = kSeparateO_ != 0;
  static constexpr int kProducerRegisters = producer_registers(kConsumers, kTransposeV_);
  static constexpr int kConsumerRegisters = consumer_registers(kConsumers, kTransposeV_);
  static_assert(kProducerRegisters + kConsumers * kConsumerRegisters <=
                    (1 + kConsumers) * entry_registers(kConsumers),
                "setmaxnreg can only move the registers the CTA was launched with");
  static constexpr int kQBytes = q_tile_bytes(kTunables);
  static constexpr int kKVBytes = kv_tile_bytes(kTunables);  // K's tile
  static constexpr int kVBytes = v_tile_bytes(kTunables);
  static constexpr bool kFp8 = is_fp8(kTunables);
  // FP8 with bf16 P V (kPvBf16): V (bf16) is read N-major as by the 16-bit family and P is bf16.
  static constexpr bool kVTransposed = v_transposed(kTunables);
  // kTransposeV: V^T written in the kernel from staged row-major V tiles (fa3_sm90_v_transpose_smem.cuh).
  static constexpr bool kTransposeVInKernel = transposes_v_in_kernel(kTunables);
  static constexpr int kElementBytes = kElementBytes_;
  static constexpr int kPvElementBytes = pv_element_bytes(kTunables);
  // Q and K: rows of D elements, K-major operands of S = Q K^T.
  using QTile = PanelTile<kBlockM, kHeadDim * kElementBytes>;
  using KTile = PanelTile<kBlockN, kHeadDim * kElementBytes>;
  // V: 16-bit (bf16 P V too), rows of D (read N-major by P V, 128-byte panels of 64 columns); FP8, V^T
  // rows of kBlockN key bytes (K-major).
  using VTile = PanelTile<kVTransposed ? kHeadDim : kBlockN, kVTransposed ? kBlockN : kHeadDim * 2>;
  // O staging: 16-bit, kBlockM x D, 128-byte panels of 64 columns.
  using OTile = PanelTile<kBlockM, kHeadDim * 2>;
  // kTransposeV: the staged row-major V tile, kBlockN rows of D codes, as K's.
  using StagedVTile = PanelTile<kBlockN, kHeadDim>;
  static constexpr int kNT = kBlockN / 8;              // 8-key tiles of S per thread
  static constexpr int kDT = kHeadDim / 8;             // 8-column tiles of O per thread
  static constexpr int kPKeys = 32 / kPvElementBytes;  // keys per P V k-step (32 bytes of A)
  static constexpr int kPSteps = kBlockN / kPKeys;
  static constexpr int kQKSteps = kHeadDim * kElementBytes / 32;

  // Shared memory, from the 1024-aligned base: Q, the K slots, the V slots, (FP8) O, (kTransposeV) the
  // staged V slots, then the barriers and (kTransposeV) the staging ring's.
  static constexpr int kKOffset = kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kKVBytes;
  static constexpr int kOOffset = o_stage_bytes(kTunables) > 0 ? kVOffset + kStages* kVBytes : 0;
  static constexpr int kStagedVOffset = kVOffset + kStages * kVBytes + o_stage_bytes(kTunables);
  static constexpr int kStagedVBytes = kBlockN * kHeadDim;  // one slot
  static constexpr int kBarrierOffset = kStagedVOffset + staged_v_bytes(kTunables);
  struct Barriers {
    fa::LoadRing<1> q;  // count = the CTA's tile number
    fa::LoadRing<kStages> k, v;
    // kDynamicTiles: the index of the tile whose Q the last q.full phase announced (total: no more tiles),
    // written by the producer before that arrival and read by the consumers after their wait on it.
    int tile_slot[kTileSlotBytes / sizeof(int)];
  };
  static_assert(sizeof(Barriers) == 8 * barrier_count(kTunables) + kTileSlotBytes,
                "barrier arithmetic of fa3_sm90_config.h");
  // kTransposeV: the staging ring (full: the TMA bytes; empty: the transposing warps) and its flags, each
  // written by the TMA thread before the slot's full arrival: 1, a V tile landed; 0, no more key blocks.
  struct StagedVBarriers {
    fa::LoadRing<kStages> ring;
    int more[staged_v_flag_bytes(kStages) / sizeof(int)];
  };
  static constexpr int kStagedVBarrierOffset = kBarrierOffset + int(sizeof(Barriers));
  __device__ static StagedVBarriers& staged_v_barriers(unsigned char* smem) {
    return *reinterpret_cast<StagedVBarriers*>(smem + kStagedVBarrierOffset);
  }
  static_assert(!kTransposeVInKernel || int(sizeof(StagedVBarriers)) == staged_v_barrier_bytes(kTunables),
                "staging barrier arithmetic of fa3_sm90_config.h");
  static_assert(kSharedAlignSlack + kStagedVBarrierOffset +
                        (kTransposeVInKernel ? int(sizeof(StagedVBarriers)) : 0) ==
                    shared_bytes(kTunables),
                "shared-memory arithmetic of fa3_sm90_config.h");
};

// The tile's coordinates and key-block range, as producer and consumers both derive them.
template <class Cfg, bool Is_causal>
struct TileWork {
  fa::Tile tile;
  int m0, n_blocks, kv_head;
  __device__ __forceinline__ TileWork(const fa::AttentionParams& p, const fa::TileScheduler& sched, int index)
      : tile(sched.tile<Is_causal>(index)),
        m0(tile.m_block * Cfg::kBlockM),
        n_blocks(fa::key_block_count<Is_causal>(m0, Cfg::kBlockM, Cfg::kBlockN, p.seqlen_q, p.seqlen_k)),
        kv_head(tile.head / (p.heads_q / p.heads_kv)) {}
};

}  // namespace fa3
