#pragma once
// fa3_sm90_bwd: the compile-time layout of one config (tile sizes, shared-memory offsets, barriers, the
// warpgroups' work split), checked against fa3_sm90_bwd_config.h, and the sequence of (query head, query
// block) steps of one CTA that the producer and the consumers derive alike.
#include "fa3_sm90_bwd_config.h"
#include "fa_params.h"
#include "fa_tma_pipeline.cuh"

namespace fa3 {

// Named barriers (0 is __syncthreads): every consumer's dS^T rows are stored; consumer warpgroup w's own
// (kBwdWarpgroupBarrier + w: the deterministic dQ order, kDqBulk's staging tile).
constexpr int kBwdDsReadyBarrier = 1;
constexpr int kBwdWarpgroupBarrier = 2;  // 2..3
constexpr int kBwdPanelColumns = 64;     // 16-bit columns in one 128-byte panel (the TMA box's inner size)

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kConsumers_, int kStages_, int kDqMode_>
struct Bwd {
  static constexpr BwdTunables kTunables{kHeadDim_, 2, kBlockM_, kBlockN_, kConsumers_, kStages_, kDqMode_};
  static_assert(bwd_violation(kTunables) == nullptr,
                "fa3_sm90_bwd config breaks a rule of fa3_sm90_bwd_config.h");

  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kConsumers = kConsumers_;
  static constexpr int kStages = kStages_;
  static constexpr bool kDeterministic = kDqMode_ == kDqDeterministic;
  static constexpr bool kDqBulkAdd = kDqMode_ == kDqBulk;
  static constexpr int kDSplit = bwd_d_split(kTunables);
  static constexpr int kDkvColumns = bwd_dkv_columns(kTunables);
  static constexpr int kDqItemsPerConsumer = bwd_dq_items_per_consumer(kTunables);
  static constexpr int kDqChunks = kHeadDim / kDqChunkColumns;  // dQ items per 64 query rows

  static constexpr int kProducerRegisters = producer_registers(kConsumers);
  static constexpr int kConsumerRegisters = consumer_registers(kConsumers);
  static_assert(kConsumers == 1 || kProducerRegisters + kConsumers * kConsumerRegisters <=
                                       (1 + kConsumers) * entry_registers(kConsumers),
                "setmaxnreg can only move the registers the CTA was launched with");

  static constexpr int kKVBytes = bwd_kv_tile_bytes(kTunables);
  static constexpr int kQBytes = bwd_q_tile_bytes(kTunables);
  static constexpr int kDsBytes = bwd_ds_tile_bytes(kTunables);
  static constexpr int kPanels = kHeadDim / kBwdPanelColumns;
  static constexpr int kKVPanelBytes = kBlockN * kPanelBytes;  // K, V: kBlockN rows per panel
  static constexpr int kQPanelBytes = kBlockM * kPanelBytes;   // Q, dO: kBlockM rows per panel
  static constexpr int kDsPanelBytes = kBlockN * kPanelBytes;  // dS^T: kBlockN key rows x 64 queries
  static constexpr int kMT = kBlockM / 8;                      // 8-query tiles of S^T per thread
  static constexpr int kDkvTiles = kDkvColumns / 8;            // 8-column tiles of dK, dV per thread
  static constexpr int kQSteps = kBlockM / 16;                 // k-steps of dV += P^T dO, dK += dS^T Q
  static constexpr int kDSteps = kHeadDim / 16;                // k-steps of S^T = K Q^T, dP^T = V dO^T
  static constexpr int kKeySteps = kBlockN / 16;               // k-steps of dQ = dS K

  // Shared memory from the 1024-aligned base: K, V, the Q slots, the dO slots, the dS^T buffers, the
  // stats (LSE in log2 units, then D) of each slot, the barriers.
  static constexpr int kKOffset = 0;
  static constexpr int kVOffset = kKVBytes;
  static constexpr int kQOffset = 2 * kKVBytes;
  static constexpr int kDoOffset = kQOffset + kStages * kQBytes;
  static constexpr int kDsOffset = kDoOffset + kStages * kQBytes;
  static constexpr int kDqStageOffset = kDsOffset + kBwdDsBuffers * kDsBytes;
  static constexpr int kDqStageBytes = kRowsPerConsumer * kDqStageRowBytes;  // per consumer warpgroup
  static constexpr int kStatsOffset = kDqStageOffset + bwd_dq_stage_bytes(kTunables);
  static constexpr int kStatsBytes = bwd_stats_bytes(kTunables);
  static constexpr int kBarrierOffset = kStatsOffset + kStages * kStatsBytes;
  struct Barriers {
    fa::Barrier kv_full;      // K and V, once per CTA
    fa::LoadRing<kStages> q;  // Q, dO by TMA and LSE, D by the producer warp's stores, per step
  };
  static_assert(sizeof(Barriers) == 8 * bwd_barrier_count(kTunables),
                "barrier arithmetic of fa3_sm90_bwd_config.h");
  static_assert(kSharedAlignSlack + kBarrierOffset + int(sizeof(Barriers)) == bwd_shared_bytes(kTunables),
                "shared-memory arithmetic of fa3_sm90_bwd_config.h");
  static_assert(kDsOffset % 1024 == 0 && kDsBytes % 1024 == 0, "wgmma tiles start on a swizzle atom");
};

// The steps of one CTA (key block n_block of key/value head kv_head): the query heads of its GQA group,
// and for each the query blocks that can see one of its keys (all of them without a causal mask; from the
// first block holding a row i with i + n_k - n_q >= n0 with one), as one sequence so that the load ring
// runs across head boundaries.
template <class Cfg, bool Is_causal>
struct BwdSteps {
  int n_block, kv_head, batch, n0, group, m_begin, per_head, count;
  __device__ __forceinline__ explicit BwdSteps(const fa::AttentionParams& p)
      : n_block(blockIdx.x),
        kv_head(blockIdx.y),
        batch(blockIdx.z),
        n0(blockIdx.x * Cfg::kBlockN),
        group(p.heads_q / p.heads_kv) {
    const int first_row = n0 - (p.seqlen_k - p.seqlen_q);
    m_begin = Is_causal ? (first_row > 0 ? first_row / Cfg::kBlockM : 0) : 0;
    const int m_blocks = (p.seqlen_q + Cfg::kBlockM - 1) / Cfg::kBlockM;
    per_head = m_blocks > m_begin ? m_blocks - m_begin : 0;
    count = group * per_head;
  }
  __device__ __forceinline__ int head(int t) const { return kv_head * group + t / per_head; }
  __device__ __forceinline__ int m0(int t) const { return (m_begin + t % per_head) * Cfg::kBlockM; }
};

}  // namespace fa3
