#pragma once
// fa3_sm90_bwd, a consumer warpgroup's dQ additions (BwdConsumer's, declared in fa3_sm90_bwd_consumer.cuh):
// each 64 x 64 dQ item of a step added to the fp32 accumulator by REDs (kDqMode 0), by the same REDs in
// key-block order, a semaphore per query block passing the turn (kDqMode 1, deterministic), or staged in
// shared memory and added by one TMA bulk reduce-add (kDqMode 2, into fa3::BwdDqTiles' tiled layout).
#include "fa3_sm90_bwd_consumer.cuh"
#include "fa3_sm90_bwd_layout.cuh"
#include "fa_backward.cuh"
#include "fa_tma.cuh"

namespace fa3 {

__device__ __forceinline__ int load_acquire_gpu(const int* address) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(address) : "memory");
  return v;
}
__device__ __forceinline__ void add_release_gpu(int* address, int value) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(address), "r"(value) : "memory");
}

// kDqBulk: the item staged in this warpgroup's tile, then ONE TMA bulk reduce-add of the whole tile into
// its tile of the accumulator (fa3::BwdDqTiles: the same layout, padding included), issued by one thread:
// the copy engine adds it at L2 instead of 2048 REDs per warpgroup. The tile is rewritten only after the
// previous item's copy has read it.
template <typename Element, class Cfg, bool Is_causal>
__device__ __forceinline__ void BwdConsumer<Element, Cfg, Is_causal>::bulk_add_dq(
    const float (&dq)[kDqChunkColumns / 8][4], float* accum, int m0, int row_tile, int chunk) {
  unsigned char* stage = smem + Cfg::kDqStageOffset + wg * Cfg::kDqStageBytes;
  if (tid == 0) fa::tma_store_wait_read();
  fa::named_barrier_sync(kBwdWarpgroupBarrier + wg, kWarpgroupThreads);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = 16 * warp + 8 * h + lane / 4;
#pragma unroll
    for (int t = 0; t < kDqChunkColumns / 8; ++t) {
      const unsigned address = fa::smem_addr(stage) + row * kDqStageRowBytes + (8 * t + 2 * (lane % 4)) * 4;
      asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(address), "f"(dq[t][2 * h]),
                   "f"(dq[t][2 * h + 1])
                   : "memory");
    }
  }
  fa::fence_shared_to_async_proxy();  // the stores, before the copy engine reads them
  fa::named_barrier_sync(kBwdWarpgroupBarrier + wg, kWarpgroupThreads);
  if (tid == 0) {
    // accum is this head's first tile (step()); m0 is a multiple of kBlockM, hence of the tile's 64 rows.
    float* dst = accum + (static_cast<long long>((m0 + row_tile * kRowsPerConsumer) / BwdDqTiles::kRows) *
                              Cfg::kDqChunks +
                          chunk) *
                             BwdDqTiles::kTileFloats;
    const float* src = reinterpret_cast<const float*>(stage);
    static_assert(Cfg::kDqStageBytes == BwdDqTiles::kTileFloats * 4,
                  "one staging tile is one accumulator tile");
#ifdef FA_MUTANT_BWD_DQ_OVERWRITE
    // [bwd-dq-overwrite] each key block's dQ share copied over the accumulator instead of added
    cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, dst, src, Cfg::kDqStageBytes);
#else
    cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add, dst,
                                    src, Cfg::kDqStageBytes);
#endif
    fa::tma_store_commit();
  }
}

// Adds a dQ item to the fp32 accumulator (rows past n_q are skipped).
template <typename Element, class Cfg, bool Is_causal>
__device__ __forceinline__ void BwdConsumer<Element, Cfg, Is_causal>::add_dq(
    const float (&dq)[kDqChunkColumns / 8][4], float* accum, int m0, int row_tile, int chunk) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = m0 + row_tile * kRowsPerConsumer + 16 * warp + 8 * h + lane / 4;
    if (row >= p.seqlen_q) continue;
#pragma unroll
    for (int t = 0; t < kDqChunkColumns / 8; ++t) {
      float* dst = accum + static_cast<long long>(row) * Cfg::kHeadDim + chunk * kDqChunkColumns + 8 * t +
                   2 * (lane % 4);
#ifdef FA_MUTANT_BWD_DQ_OVERWRITE
      // [bwd-dq-overwrite] each key block's dQ share stored over the accumulator instead of added
      *reinterpret_cast<float2*>(dst) = make_float2(dq[t][2 * h], dq[t][2 * h + 1]);
#else
      fa::red_add_f32x2(dst, dq[t][2 * h], dq[t][2 * h + 1]);
#endif
    }
  }
}

// Deterministic mode: key block n adds to a query block after all blocks before it (each of their
// warpgroups adds 1 to the block's counter once done), so every accumulator element is summed in the
// order of the key blocks, whatever order the CTAs run in.
// Unbounded for the reason of fa::barrier_wait_unbounded: a warpgroup stuck here does not release its
// Q/dO slot, and the producer's bounded drain traps.
template <typename Element, class Cfg, bool Is_causal>
__device__ __forceinline__ void BwdConsumer<Element, Cfg, Is_causal>::wait_turn(const int* semaphore) {
  if (tid == 0) {
    const int target = Cfg::kConsumers * w.n_block;
    while (load_acquire_gpu(semaphore) < target) {
    }
  }
  fa::named_barrier_sync(kBwdWarpgroupBarrier + wg, kWarpgroupThreads);
}
template <typename Element, class Cfg, bool Is_causal>
__device__ __forceinline__ void BwdConsumer<Element, Cfg, Is_causal>::pass_turn(int* semaphore) {
  __threadfence();  // this thread's REDs, before the warpgroup's signal
  fa::named_barrier_sync(kBwdWarpgroupBarrier + wg, kWarpgroupThreads);
  if (tid == 0) add_release_gpu(semaphore, 1);
}

}  // namespace fa3
