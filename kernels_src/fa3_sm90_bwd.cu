// fa3_sm90_bwd: FlashAttention-3's backward structure on Hopper (sm_90a), written out without CUTLASS.
//
//   step 0  fa_bwd_preprocess (fa_backward.cuh): D = rowsum(dO * O) per query row, the fp32 dQ
//           accumulator zeroed (and the deterministic mode's counters).
//   step 1  fa3_sm90_bwd: one CTA per (key block, key/value head, batch), looping over the query heads of
//           its GQA group and their query blocks (so dK and dV of a group are summed in registers and
//           written once: no dK/dV accumulator). Warp specialisation: one thread of warpgroup 0 loads K,
//           V once and Q, dO per step (TMA), warp 1 the LSE and D rows, through a kStages ring; consumer
//           warpgroups recompute S^T, P^T, dP^T, dS^T and run dV += P^T dO, dK += dS^T Q, dQ += dS K on
//           wgmma (fa3_sm90_bwd_consumer.cuh). dQ reaches an fp32 accumulator by REDs (kDqMode 0), by
//           the same REDs ordered per query block across key blocks (kDqMode 1: the same bits every run),
//           or by TMA bulk reduce-add of rows staged in shared memory (kDqMode 2).
//   step 2  fa_bwd_dq_convert: dQ = scale * accumulator in the output dtype.
#include "fa3_sm90_bwd_consumer.cuh"
#include "fa3_sm90_bwd_dq_add.cuh"
#include "fa3_sm90_bwd_layout.cuh"
#include "fa3_sm90_bwd_producer.cuh"
#include "fa_backward.cuh"
#include "fa_tma.cuh"
#include "fa_tma_params.h"
#include "fa_types.cuh"
#include "fa_wgmma.cuh"

// The kernel the runtime instantiates by name expression, e.g.
//   fa3_sm90_bwd<__nv_bfloat16, 128, 64, 128, 2, 2, 0, false>
// (Element, kHeadDim, kBlockM, kBlockN, kConsumers, kStages, kDqMode, Is_causal).
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kConsumers, int kStages, int kDqMode,
          bool Is_causal>
__global__ void __launch_bounds__(fa3::kWarpgroupThreads*(1 + kConsumers), 1)
    fa3_sm90_bwd(const __grid_constant__ fa::AttentionParams params,
                 const __grid_constant__ fa::TmaBwdDescriptors maps) {
  using Cfg = fa3::Bwd<kHeadDim, kBlockM, kBlockN, kConsumers, kStages, kDqMode>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = fa::align_to_swizzle_atom(smem_raw);
  auto& bars = *reinterpret_cast<typename Cfg::Barriers*>(smem + Cfg::kBarrierOffset);
  if (threadIdx.x == 0) {
    fa::barrier_init(&bars.kv_full, 1);
    // Every consumer thread arrives on a slot's empty barrier: the slot's LSE and D rows are the producer
    // warp's ordinary stores, read by every consumer thread, and an mbarrier arrival releases only the
    // arriving thread's own accesses (PTX memory model), so each reader releases the slot itself before
    // the next write (one arrival per warpgroup: racecheck reported 16-32 hazards on those words, H200,
    // 2026-12-01 session 4; fa3_sm90_fwd.cu's tile slot is the same case).
    bars.q.init(kConsumers * fa3::kWarpgroupThreads, fa3::kBwdFullArrivals);
    fa::barrier_init_fence();
  }
  __syncthreads();
  const int warpgroup = threadIdx.x / fa3::kWarpgroupThreads;
  if (warpgroup == 0) {
    if constexpr (kConsumers > 1) fa::release_registers<Cfg::kProducerRegisters>();
    const fa3::BwdSteps<Cfg, Is_causal> steps(params);
    if (threadIdx.x == 0) fa3::load_tiles_bwd<Cfg, Is_causal>(maps, smem, bars, steps);
    if (threadIdx.x / 32 == 1)
      fa3::load_stats_bwd<Cfg, Is_causal>(params, smem, bars, steps, threadIdx.x % 32);
    return;  // each role ends in its own branch: ptxas then allocates each at its setmaxnreg count
  } else {
    if constexpr (kConsumers > 1) fa::claim_registers<Cfg::kConsumerRegisters>();
    const fa3::BwdSteps<Cfg, Is_causal> steps(params);
    fa3::BwdConsumer<Element, Cfg, Is_causal> c{params, smem, bars, steps, warpgroup - 1};
    c.run();
    return;
  }
}
