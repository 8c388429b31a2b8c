#pragma once
// fa3_sm90 forward, the epilogue of one consumer warpgroup: O normalised once and LSE written
// (fa_epilogue.cuh, shared with every forward family), O rounded to the output type (the element type;
// bf16 for FP8) and staged in the warpgroup's own 64 rows of the Q tile (its products are complete and no
// other warpgroup reads those rows; FP8 Q is too small, so FP8 has an O tile of its own, as kSeparateO gives
// 16-bit), then written by
// TMA, one 64 x 64 box per 128-byte panel: 16-byte-granular, fully coalesced, and
// rows past n_q are clipped by the tensor map. The staging uses the panels' 128-byte swizzle, so the
// warp's 4-byte stores (8 rows x 4 lanes at one 16-byte chunk each) hit 32 different banks.
#include "fa3_sm90_layout.cuh"
#include "fa_epilogue.cuh"
#include "fa_tma.cuh"
#include "fa_tma_params.h"
#include "fa_types.cuh"

namespace fa3 {

template <typename Element, bool kFp8>
struct OutputType {
  using type = Element;
};
template <typename Element>
struct OutputType<Element, true> {
  using type = __nv_bfloat16;
};

// o_factor: what O is multiplied by before the division by l (FP8: v_descale / p_scale; 16-bit: 1).
template <typename Element, class Cfg, bool Is_causal>
__device__ __forceinline__ void store_tile(const fa::AttentionParams& p, const fa::TmaDescriptors& maps,
                                           const TileWork<Cfg, Is_causal>& w, float (&o)[1][Cfg::kDT][4],
                                           const fa::OnlineSoftmax<1>& softmax, float scale_log2,
                                           float o_factor, unsigned char* o_rows, int wg, int warp,
                                           int lane) {
  using Out = typename OutputType<Element, Cfg::kFp8>::type;
  using OTile = typename Cfg::OTile;
  if constexpr (Cfg::kFp8) {
#pragma unroll
    for (int dt = 0; dt < Cfg::kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[0][dt][e] *= o_factor;
  }
  const int wg_row0 = w.m0 + wg * kRowsPerConsumer;
  const int row0 = wg_row0 + 16 * warp + lane / 4;
  float* lse = p.lse + (static_cast<long long>(w.tile.batch) * p.heads_q + w.tile.head) * p.seqlen_q;
  fa::normalise_and_write_lse(o, softmax, true, !fa::kNormalizeInLoop, scale_log2, lse + row0,
                              p.seqlen_q - row0, lane);

  // With Q released before the epilogue (kEarlyQRelease), nothing else holds the warpgroup's threads back
  // until the previous tile's store has read this staging tile: wait for its issuing thread, which waited
  // for that read (below).
  if constexpr (Cfg::kEarlyQRelease) fa::named_barrier_sync(kEpilogueBarrier + wg, kWarpgroupThreads);
  const int g = lane / 4, c = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = 16 * warp + 8 * h + g;  // within the warpgroup's 64 rows; row % 8 == g
#pragma unroll
    for (int dt = 0; dt < Cfg::kDT; ++dt) {
      const unsigned address = fa::smem_addr(o_rows) + (dt / 8) * OTile::kPanelBytes + row * kPanelBytes +
                               (((dt % 8) ^ g) * 16) + 4 * c;
      const unsigned packed = fa::ElementTraits<Out>::pack(o[0][dt][2 * h], o[0][dt][2 * h + 1]);
      asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(address), "r"(packed) : "memory");
    }
  }
  fa::fence_shared_to_async_proxy();  // each writer's stores, before the copy engine reads them
  fa::named_barrier_sync(kEpilogueBarrier + wg, kWarpgroupThreads);
  if (threadIdx.x % kWarpgroupThreads == 0) {
#pragma unroll
    for (int panel = 0; panel < OTile::kPanels; ++panel)
      fa::tma_store(maps.o, panel * kOColumnsPerPanel, wg_row0, w.tile.head, w.tile.batch,
                    o_rows + panel * OTile::kPanelBytes);
    fa::tma_store_commit();
    fa::tma_store_wait_read();  // the next tile's Q (or O) may land here once the store has read it
  }
}

}  // namespace fa3
