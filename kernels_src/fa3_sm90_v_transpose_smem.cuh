#pragma once
// fa3_sm90 FP8 with kTransposeV = 1 (FlashAttention-3's alternative to the transpose launch): the producer
// warpgroup's warps 1..3 turn each staged row-major V tile (kBlockN keys x D codes, TMA-loaded by thread 0
// into a ring of kStages slots: fa3_sm90_producer.cuh) into the V^T slot that the consumers' P V reads, the
// same bytes at the same places as the TMA copy of the transpose launch's V^T would leave there: positions
// in permuted_key order, the slot's 64- or 128-byte swizzle (fa3_sm90_v_transpose_map.h). The consumers
// do not change.
//
// Per key block `count` (the ring count every role shares), each transposing warp:
//   1. waits for the staged tile (staged full: TMA bytes) and reads the slot's flag: 0 means the TMA thread
//      has no more key blocks for this CTA, and the warp is done;
//   2. waits for the V^T slot to be free (V empty: every consumer warpgroup's P V of the load kStages
//      before has completed), as the TMA thread waits before a copy into it;
//   3. transposes its steps of the tile (warp w of 3 takes steps w, w + 3, ...; a step is 32 units of
//      4 keys x 4 columns: four ld.shared.b32, eight prmt, four st.shared.b32 per lane);
//   4. fences its stores for the async proxy (wgmma reads V^T through it) and, once the warp has passed
//      __syncwarp, its lane 0 releases the staged slot and arrives on V full (both counted kTransposeWarps).
// No deadlock with the TMA thread: it transposes nothing, and it waits only for staged slots the
// transposers free after count - kStages, which they reach without any copy it has not issued yet (K_{j+1}
// and V_j are both issued before V_{j+1}), so every wait of either side is on an earlier load.
//
// Shared-memory traffic per tile: kBlockN x D bytes read and the same written by 32-bit accesses that each
// hit 32 banks (the unit map: fa3_sm90_v_transpose_map.h), i.e. 2 kBlockN D / 128 wavefronts: 256 at
// 128 x 128 (16 KiB each way), on top of the TMA's write of the staged tile and wgmma's read of V^T.
#include "fa3_sm90_layout.cuh"
#include "fa3_sm90_v_transpose_map.h"
#include "fa_fp8.cuh"
#include "fa_tma.cuh"
#include "fa_tma_pipeline.cuh"
#include "fa_types.cuh"

namespace fa3 {

// The prmt selectors of one lane (fa3_sm90_v_transpose_map.h), computed once.
struct TransposeSelectors {
  unsigned low, high, even, odd;
  int load_flip, store_flip;
};

template <class Cfg>
__device__ __forceinline__ TransposeSelectors transpose_selectors(int lane) {
  const int lf = load_flip(Cfg::kHeadDim, lane), sf = store_flip(Cfg::kBlockN, lane);
  return {interleave_low_selector(lf),
          interleave_high_selector(lf),
          join_selector(0, sf),
          join_selector(1, sf),
          lf,
          sf};
}

// One warp step of the tile at `staged` (shared address) into the V^T slot at `vt`.
template <class Cfg>
__device__ __forceinline__ void transpose_step(unsigned staged, unsigned vt, int step, int lane,
                                               const TransposeSelectors& sel) {
  constexpr int kD = Cfg::kHeadDim, kN = Cfg::kBlockN;
  const TransposeUnit u = transpose_unit(kD, step, lane);
  unsigned r[4];  // r[e]: 4 columns of the unit's key e ^ load_flip
#pragma unroll
  for (int e = 0; e < 4; ++e)
    asm volatile("ld.shared.b32 %0, [%1];\n"
                 : "=r"(r[e])
                 : "r"(staged + staged_v_offset(kD, kN, unit_key(u, e ^ sel.load_flip), u.column))
                 : "memory");
  const unsigned lo01 = fa::byte_perm(r[0], r[1], sel.low), hi01 = fa::byte_perm(r[0], r[1], sel.high);
  const unsigned lo23 = fa::byte_perm(r[2], r[3], sel.low), hi23 = fa::byte_perm(r[2], r[3], sel.high);
  const unsigned word[4] = {fa::byte_perm(lo01, lo23, sel.even), fa::byte_perm(lo01, lo23, sel.odd),
                            fa::byte_perm(hi01, hi23, sel.even), fa::byte_perm(hi01, hi23, sel.odd)};
  const int position = 16 * u.group + 4 * u.pair;  // the V^T word of keys {2c, 2c+1, 8+2c, 9+2c}
#pragma unroll
  for (int i = 0; i < 4; ++i)  // word i: column i ^ store_flip
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(
                     vt + vt_slot_offset(kD, kN, u.column + (i ^ sel.store_flip), position)),
                 "r"(word[i])
                 : "memory");
}

// Warps 1..kTransposeWarps of the producer warpgroup, until the TMA thread's flag says no more key blocks.
template <class Cfg>
__device__ __forceinline__ void transpose_v_tiles(unsigned char* smem, typename Cfg::Barriers& bars,
                                                  typename Cfg::StagedVBarriers& staged) {
  static_assert(Cfg::kTransposeVInKernel, "the in-kernel transpose writes FP8 V^T");
  constexpr int kSteps = transpose_steps(Cfg::kHeadDim, Cfg::kBlockN);
  const int warp = int(threadIdx.x) / 32 - 1, lane = int(threadIdx.x) % 32;
  const TransposeSelectors sel = transpose_selectors<Cfg>(lane);
  const unsigned staged_tiles = fa::smem_addr(smem) + Cfg::kStagedVOffset;
  const unsigned vt_tiles = fa::smem_addr(smem) + Cfg::kVOffset;
  using Ring = fa::LoadRing<Cfg::kStages>;
  for (int count = 0;; ++count) {
    staged.ring.wait_full(count, "v_staged_full");
    if (*static_cast<volatile int*>(&staged.more[Ring::slot(count)]) == 0) return;
    bars.v.wait_empty(count, "v_empty");
    const unsigned from = staged_tiles + Ring::slot(count) * Cfg::kStagedVBytes;
    const unsigned to = vt_tiles + Ring::slot(count) * Cfg::kVBytes;
    // One step at a time (four words in flight per lane): the producer's 40 registers (fa3_sm90_config.h).
#pragma unroll 1
    for (int step = warp; step < kSteps; step += kTransposeWarps)
      transpose_step<Cfg>(from, to, step, lane, sel);
    fa::fence_shared_to_async_proxy();  // each lane's stores, before wgmma reads them
    __syncwarp();
    staged.ring.release(count, lane == 0);
    bars.v.publish(count, lane == 0);
  }
}

}  // namespace fa3
