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
//   3. transposes its steps of the tile (warp w of 3 takes steps w, w + 3, ...; a step is 512 bytes: one
//      ldmatrix.x4.trans, four prmt, one stmatrix.x4 and two integer operations per address, the next
//      step's ldmatrix issued before this one's stmatrix);
//   4. fences its stores for the async proxy (wgmma reads V^T through it) and, once the warp has passed
//      __syncwarp, its lane 0 releases the staged slot and arrives on V full (both counted kTransposeWarps).
// No deadlock with the TMA thread: it transposes nothing, and it waits only for staged slots the
// transposers free after count - kStages, which they reach without any copy it has not issued yet (K_{j+1}
// and V_j are both issued before V_{j+1}), so every wait of either side is on an earlier load.
//
// Why the step is this short. The time the transpose has is short: with kStages = 2 V^T slots and
// ping-pong, the trailing consumer warpgroup frees slot j % 2 at the end of its iteration j, half an
// iteration before the leading one wants V_{j+2} (~1250 of ~2500 cycles at d128, ~1050 at d256 x 64;
// H200, experiments/fa3_sm90_fp8). The first version (32-bit loads and stores, a 4 x 4 byte transpose of
// eight prmt, every swizzled address recomputed with signed divisions: ~170 PTX instructions per 512
// bytes, ~1900 per warp and tile) ran the forward at ~430-470 TFLOP/s at every head dim, ~1.1-1.4 us more
// per key block than the transpose launch: the transposing warps, sharing the issue slots with the
// consumers' softmax, took ~3300-3700 cycles per 16 KiB tile. This one: ~35 PTX instructions per step.
//
// Shared-memory traffic per tile: kBlockN x D bytes read and the same written, every 8x8 matrix one
// wavefront: 2 kBlockN D / 128 wavefronts (256 at 128 x 128), on top of the TMA's write of the staged tile
// and wgmma's read of V^T.
#include "fa3_sm90_layout.cuh"
#include "fa3_sm90_v_transpose_map.h"
#include "fa_fp8.cuh"
#include "fa_mma.cuh"
#include "fa_tma.cuh"
#include "fa_tma_pipeline.cuh"
#include "fa_types.cuh"

namespace fa3 {

static_assert(join_selector(0, 0) == fa::kPermEvenColumns && join_selector(0, 1) == fa::kPermOddColumns,
              "the transpose's prmt selectors are fa_fp8.cuh's even and odd V columns");

// Four 8x8 matrices of 16-bit elements to shared memory; lane l gives the row address of matrix l/8, row
// l%8, and its register m goes to row l/4, elements 2(l%4), 2(l%4)+1 of matrix m (PTX ISA, stmatrix).
__device__ __forceinline__ void stmatrix_x4(unsigned addr, const unsigned (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

// One lane's constant parts of the transpose (fa3_sm90_v_transpose_map.h), computed once.
struct TransposeLane {
  unsigned staged_add, vt_add;  // the lane's row offsets (added to a slot's address)
  unsigned staged_x, vt_x;      // their swizzled chunk bits
  unsigned select[2];           // prmt selectors of output registers m with m & 1 = 0, 1
};

template <class Cfg>
__device__ __forceinline__ TransposeLane transpose_lane(int lane) {
  const SplitOffset s = staged_lane_part(Cfg::kHeadDim, lane), t = vt_lane_part(Cfg::kBlockN, lane);
  return {unsigned(s.add),
          unsigned(t.add),
          unsigned(s.x),
          unsigned(t.x),
          {join_selector(lane, 0), join_selector(lane, 1)}};
}

// The ldmatrix of step `step` from the staged tile whose lane row is at `staged` (slot + staged_add).
template <class Cfg>
__device__ __forceinline__ void load_step(unsigned (&r)[4], unsigned staged, int step,
                                          const TransposeLane& l) {
  const SplitOffset s = staged_step_part(Cfg::kHeadDim, Cfg::kBlockN, step);
  fa::ldmatrix_x4_trans(r, staged + unsigned(s.add) + (l.staged_x ^ unsigned(s.x)));
}
// Step `step`'s four V^T words from its ldmatrix registers, stored at the lane row `vt` (slot + vt_add).
template <class Cfg>
__device__ __forceinline__ void store_step(unsigned vt, const unsigned (&r)[4], int step,
                                           const TransposeLane& l) {
  const SplitOffset t = vt_step_part(Cfg::kHeadDim, Cfg::kBlockN, step);
  const unsigned w[4] = {fa::byte_perm(r[0], r[1], l.select[0]), fa::byte_perm(r[0], r[1], l.select[1]),
                         fa::byte_perm(r[2], r[3], l.select[0]), fa::byte_perm(r[2], r[3], l.select[1])};
  stmatrix_x4(vt + unsigned(t.add) + (l.vt_x ^ unsigned(t.x)), w);
}

// Warps 1..kTransposeWarps of the producer warpgroup, until the TMA thread's flag says no more key blocks.
template <class Cfg>
__device__ __forceinline__ void transpose_v_tiles(unsigned char* smem, typename Cfg::Barriers& bars,
                                                  typename Cfg::StagedVBarriers& staged) {
  static_assert(Cfg::kTransposeVInKernel, "the in-kernel transpose writes FP8 V^T");
  constexpr int kSteps = transpose_steps(Cfg::kHeadDim, Cfg::kBlockN);
  const int warp = int(threadIdx.x) / 32 - 1, lane = int(threadIdx.x) % 32;
  const TransposeLane l = transpose_lane<Cfg>(lane);
  const unsigned staged_tiles = fa::smem_addr(smem) + Cfg::kStagedVOffset + l.staged_add;
  const unsigned vt_tiles = fa::smem_addr(smem) + Cfg::kVOffset + l.vt_add;
  using Ring = fa::LoadRing<Cfg::kStages>;
  for (int count = 0;; ++count) {
    staged.ring.wait_full(count, "v_staged_full");
    if (*static_cast<volatile int*>(&staged.more[Ring::slot(count)]) == 0) return;
    bars.v.wait_empty(count, "v_empty");
    const unsigned from = staged_tiles + Ring::slot(count) * Cfg::kStagedVBytes;
    const unsigned to = vt_tiles + Ring::slot(count) * Cfg::kVBytes;
    // Two steps in flight: the next step's ldmatrix before this one's stores (eight data registers).
    unsigned r[4];
    load_step<Cfg>(r, from, warp, l);
#pragma unroll 1
    for (int step = warp; step < kSteps; step += kTransposeWarps) {
      const int following = step + kTransposeWarps;
      unsigned next[4] = {0, 0, 0, 0};
      if (following < kSteps) load_step<Cfg>(next, from, following, l);
      store_step<Cfg>(to, r, step, l);
#pragma unroll
      for (int m = 0; m < 4; ++m) r[m] = next[m];
    }
    fa::fence_shared_to_async_proxy();  // each lane's stores, before wgmma reads them
    __syncwarp();
    staged.ring.release(count, lane == 0);
    bars.v.publish(count, lane == 0);
  }
}

}  // namespace fa3
