// fa3_sm90 forward: the FlashAttention-3 design on Hopper (sm_90a), written out without CUTLASS.
//
// Warp specialisation. Warpgroup 0 is the producer: after giving most of its registers to the others
// (setmaxnreg), one thread issues every TMA copy: Q once per tile, K and V through a ring of kStages
// slots. Warpgroups 1..kConsumers each own 64 query rows of the tile (kBlockM = 64 x kConsumers) and run
// S = Q K^T (wgmma, both operands in shared memory), the online softmax in registers (fa_softmax.cuh, the
// same code as the mma.sync families: the m64 accumulator of a warp is one 16-row mma.sync tile) and
// O += P V (wgmma with P from registers, V read N-major from its TMA tile).
//
// Intra-warpgroup overlap (kIntraWgOverlap): S_{j+1} = Q K_{j+1} and O += P_j V_j are both in flight
// while the softmax of block j+1 runs, so the tensor cores never wait for the exponentials of their own
// warpgroup. Ping-pong (kPingPong): the consumer warpgroups take turns issuing their products (a named
// barrier per warpgroup, round robin), so one warpgroup's softmax overlaps another's products.
//
// Key blocks are walked from the last to the first (the masked causal-diagonal and tail blocks come
// first). The epilogue normalises once, writes LSE, stages O (bf16/fp16) in the warpgroup's own Q rows
// (no other warpgroup reads them) and stores it with TMA; rows past n_q are clipped by the tensor map.
// Persistent (kPersistent): one CTA per SM walks the tiles (fa_tile_scheduler.cuh); the next tile's
// first K block loads while the last tile's epilogue runs.
//
// FP8 (Element = __nv_fp8_e4m3 / e5m2): the same kernel on k32 wgmma with V^T, written by
// fa3_sm90_transpose_v (fa3_sm90_transpose.cuh) in the launch before, or (kTransposeV) by the producer
// warpgroup's warps 1..3 from staged row-major V tiles (fa3_sm90_v_transpose_smem.cuh); bf16 O.
// kBlockDescale: per-block descale factors (fa_params.h) instead of per-tensor ones; see
// fa3_sm90_consumer.cuh. kPvBf16 (FP8 only): O += P V in bf16 with V given in bf16 (no transpose launch), S =
// Q K^T still FP8 (issue 15's error item).
#include "fa3_sm90_consumer_tiles.cuh"
#include "fa3_sm90_layout.cuh"
#include "fa3_sm90_producer.cuh"
#include "fa3_sm90_transpose.cuh"
#include "fa3_sm90_v_transpose_smem.cuh"
#include "fa_tma.cuh"
#include "fa_tma_params.h"
#include "fa_types.cuh"
#include "fa_wgmma.cuh"

// The kernel the runtime instantiates by name expression, e.g.
//   fa3_sm90_fwd<__nv_bfloat16, 128, 128, 2, 2, 1, 1, 1, false, false>
// (Element, kHeadDim, kBlockN, kConsumers, kStages, kPingPong, kIntraWgOverlap, kPersistent, Is_causal,
// kBlockDescale[, kSeparateO[, kPvBf16[, kTransposeV]]]); they default to 0, so the names without them
// stay valid.
template <typename Element, int kHeadDim, int kBlockN, int kConsumers, int kStages, int kPingPong,
          int kIntraWgOverlap, int kPersistent, bool Is_causal, bool kBlockDescale, int kSeparateO = 0,
          int kPvBf16 = 0, int kTransposeV = 0>
__global__ void __launch_bounds__(fa3::kWarpgroupThreads*(1 + kConsumers), 1)
    fa3_sm90_fwd(const __grid_constant__ fa::AttentionParams params,
                 const __grid_constant__ fa::TmaDescriptors maps) {
  using Cfg = fa3::Fwd<int(sizeof(Element)), kHeadDim, kBlockN, kConsumers, kStages, kPingPong,
                       kIntraWgOverlap, kPersistent, kSeparateO, kPvBf16, kTransposeV>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem =
      smem_raw +
      ((fa::kSwizzleAtomBytes - fa::smem_addr(smem_raw) % fa::kSwizzleAtomBytes) % fa::kSwizzleAtomBytes);
  auto& bars = *reinterpret_cast<typename Cfg::Barriers*>(smem + Cfg::kBarrierOffset);
  if (threadIdx.x == 0) {
    // kDynamicTiles: every consumer thread reads the tile slot beside Q, and an mbarrier arrival releases
    // only the arriving thread's own accesses (PTX memory model), so each of them releases Q itself
    // before the producer writes the slot again (with one arrival per warpgroup, compute-sanitizer's
    // racecheck reported the readers against that write: experiments/fa3_sm90, session 3).
    bars.q.init(Cfg::kDynamicTiles ? kConsumers * fa3::kWarpgroupThreads : kConsumers);
    bars.k.init(kConsumers);
    if constexpr (Cfg::kTransposeVInKernel) {
      // V^T slots are filled by the transposing warps (one arrival each), the staging ring by TMA and
      // emptied by those warps.
      bars.v.init(kConsumers, fa3::kTransposeWarps);
      Cfg::staged_v_barriers(smem).ring.init(fa3::kTransposeWarps);
    } else {
      bars.v.init(kConsumers);
    }
    fa::barrier_init_fence();
  }
  __syncthreads();
  const int warpgroup = threadIdx.x / fa3::kWarpgroupThreads;
  if (warpgroup == 0) {
    if constexpr (kConsumers > 1) fa::release_registers<Cfg::kProducerRegisters>();
    if (threadIdx.x == 0) fa3::produce<Cfg, Is_causal>(params, maps, smem, bars);
    if constexpr (Cfg::kTransposeVInKernel) {
      if (threadIdx.x >= 32) fa3::transpose_v_tiles<Cfg>(smem, bars, Cfg::staged_v_barriers(smem));
    }
    return;  // each role ends in its own branch: ptxas then allocates each at its setmaxnreg count
  } else {
    if constexpr (kConsumers > 1) fa::claim_registers<Cfg::kConsumerRegisters>();
    fa3::consume<Element, Cfg, Is_causal, kBlockDescale>(params, maps, smem, bars, warpgroup - 1);
    return;
  }
}
