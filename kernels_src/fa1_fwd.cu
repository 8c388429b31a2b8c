// fa1: the FlashAttention-1 loop order. The outer loop over key/value blocks is the sequence of launches
// (params.step = key block j, one launch each); the inner loop over query blocks is the grid. Each CTA
// loads its Q block and K_j, V_j (kBlockN keys, the whole block in shared memory, as FA-1 holds it in
// SRAM), reads the running O (fp32), m and l of its rows from device memory, applies the online softmax
// to the block and writes the state back; the step of a query block's last visible key block normalises
// and writes O and LSE. So O, m, l make a round trip through device memory at every outer step: the
// traffic FlashAttention-2 removed by swapping the loops (fa2_sm80_fwd.cu, same tensor-core products).
//
// Everything but that round trip is fa2_sm80's: the products (fa_warp_mma.cuh, FA-2 warp layout: each
// warp owns kBlockM / kNWarps rows), the softmax, masks and the 16-byte O store through shared memory.
// Per d128 CTA-step of 128 x 128 the bytes are Q 32 KiB + K, V 64 KiB + O 128 KiB (+ 1 KiB m, l) for
// 8.4 MFLOP: ~37 FLOP/byte, ~150 TFLOP/s at the H200's 4.23 TB/s if all came from DRAM (K, V mostly hit
// L2). What keeps the step from being latency-bound:
//   - the block's copies are issued at once as kBlockN / kChunkN chunk groups, the masked chunks first:
//     {Q, K_last}, V_last, K_last-1, ... (empty groups for chunks the mask hides keep the wait depths
//     those of a full block); S = Q K_c^T starts when its chunk has landed, the rest keeps arriving;
//   - the O, m, l loads (fa_fragment_state.cuh: 16-byte vectors in the registers' own order) are issued
//     right after {Q, K_last} and V_last, and are first needed by the first chunk's rescale, after its
//     Q K^T: the latency of one product is hidden;
//   - S lives in registers one chunk of kChunkN keys at a time, so kBlockN (O round trips per FLOP) and
//     the register tile are separate tunables (fa2_sm80's 128 x 32 at d128 would be 32-key steps here);
//   - a query block ends at its last visible key block: steps the causal mask hides return at once (the
//     old kernel reread and rewrote the state at the last step of every block).
#include "fa1_config.h"
#include "fa_arch.h"
#include "fa_block_range.cuh"
#include "fa_copy.cuh"
#include "fa_epilogue.cuh"
#include "fa_fragment_state.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_tile_coords.cuh"
#include "fa_warp_mma.cuh"

template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kChunkN, int kNWarps, bool Is_causal>
__global__ void __launch_bounds__(fa::kWarpSize* kNWarps)
    fa1_fwd_step(const __grid_constant__ fa::AttentionParams p) {
  constexpr int kThreads = fa::kWarpSize * kNWarps, kWarpRows = kBlockM / kNWarps, kMT = kWarpRows / 16;
  constexpr int kNT = kChunkN / 8, kDT = kHeadDim / 8, kRowBytes = kHeadDim * 2;
  constexpr int kChunks = kBlockN / kChunkN;
  static_assert(fa1::violation({kHeadDim, kBlockM, kBlockN, kChunkN, kNWarps}) == nullptr,
                "a config fa1_config.h rejects");
  extern __shared__ __align__(128) unsigned char smem[];

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const fa::QueryTile tile = fa::query_tile<kBlockM>(p);
  const int m0 = tile.m0, j = p.step;
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  // Key blocks (launches) and chunks this query block sees; it ends at its last visible block (block 0
  // when it sees none: n_q > n_k, rows above the diagonal write O = 0, LSE = -inf there).
  const int steps = fa::key_block_count<Is_causal, kBlockM, kBlockN>(m0, {p.seqlen_k, causal_offset});
  const int final_step = steps > 0 ? steps - 1 : 0;
  if (j > final_step) return;  // hidden by the mask: nothing to add, the state was finished earlier
  const int visible_chunks =
      fa::key_block_count<Is_causal, kBlockM, kChunkN>(m0, {p.seqlen_k, causal_offset}) - j * kChunks;
  const int n_chunks = visible_chunks < kChunks ? (visible_chunks > 0 ? visible_chunks : 0) : kChunks;
  const float scale_log2 = fa::scale_log2_of(p);

  const unsigned s_q = fa::smem_addr(smem), s_k = s_q + kBlockM * kRowBytes, s_v = s_k + kBlockN * kRowBytes;
  const Element* k = fa::k_slice<Element>(p, tile.batch, tile.kv_head) + j * kBlockN * p.k_row_stride;
  const Element* v = fa::v_slice<Element>(p, tile.batch, tile.kv_head) + j * kBlockN * p.v_row_stride;
  const int keys_valid = p.seqlen_k - j * kBlockN;
  // Chunk c's rows of K or V into its slot (rows past n_k zero-filled, fa_copy.cuh).
  auto load_chunk = [&](unsigned s_tile, const Element* gmem, long long row_stride, int c) {
    fa::load_tile_async<kChunkN, kHeadDim, kThreads>(s_tile + c * kChunkN * kRowBytes,
                                                     gmem + c * kChunkN * row_stride, row_stride,
                                                     keys_valid - c * kChunkN, tid);
  };
  if (n_chunks > 0) {
    fa::load_tile_async<kBlockM, kHeadDim, kThreads>(
        s_q, fa::q_slice<Element>(p, tile.batch, tile.head) + m0 * p.q_row_stride, p.q_row_stride,
        p.seqlen_q - m0, tid);
    load_chunk(s_k, k, p.k_row_stride, n_chunks - 1);
    fa::cp_async_commit();
    load_chunk(s_v, v, p.v_row_stride, n_chunks - 1);
    fa::cp_async_commit();
  }

  // The running state of this warp's rows, from device memory (fresh at the first step).
  const int warp_query_row0 = m0 + warp * kWarpRows;
  const long long state_row0 =
      (static_cast<long long>(tile.batch) * p.heads_q + tile.head) * fa::state_rows_per_head(p) +
      warp_query_row0;
  float o[kMT][kDT][4];
  fa::clear_accumulators(o);
  fa::OnlineSoftmax<kMT> softmax;
  softmax.init();
  if (j > 0) fa::load_fragment_state<kHeadDim>(p, state_row0, warp_query_row0, o, softmax, lane);

  // The other chunks, last to first (chunk n_chunks - 1 - t at iteration t), two groups each.
  if (n_chunks > 0) {
#pragma unroll
    for (int t = 1; t < kChunks; ++t) {
      const int c = n_chunks - 1 - t;
      if (c >= 0) load_chunk(s_k, k, p.k_row_stride, c);
      fa::cp_async_commit();
      if (c >= 0) load_chunk(s_v, v, p.v_row_stride, c);
      fa::cp_async_commit();
    }
  }

  const int row0 = warp_query_row0 + lane / 4;
  const int unmasked_limit = fa::unmasked_key_limit<Is_causal>(m0, {p.seqlen_k, causal_offset});
  const fa::LaneOffsets lo(lane);
  // Rolled, as fa2_sm80's key loop (the barriers part the chunks anyway): unrolled, ptxas spilled 16-36
  // bytes in single configs at 96-168 registers (d64 64 x 256 / 32-key chunks, d128 64 x 128 / 64; CUDA
  // 13.0), rolled none over the space. The waits' depth is a chain of compares (cp_async_wait_at_most).
#pragma unroll 1
  for (int t = 0; t < n_chunks; ++t) {
    const int c = n_chunks - 1 - t, chunk = j * kChunks + c;  // chunk: in units of kChunkN keys from key 0
    fa::cp_async_wait_at_most<2 * kChunks - 1>(2 * (kChunks - t) - 1);  // {Q,} K_c landed
    __syncthreads();
    float s[kMT][kNT][4];
    fa::clear_accumulators(s);
    fa::warp_qk<Element, kMT, kNT, kHeadDim>(s, s_q + (warp * kWarpRows + lo.row_a) * kRowBytes,
                                             s_k + (c * kChunkN + lo.row_b) * kRowBytes, lo);
    if (fa::key_block_needs_mask(chunk, kChunkN, unmasked_limit))
      fa::apply_mask<Is_causal>(s, row0, chunk * kChunkN + 2 * (lane % 4), p.seqlen_k, causal_offset);
    softmax.step(s, o, scale_log2);
    fa::cp_async_wait_at_most<2 * kChunks - 1>(2 * (kChunks - t) - 2);  // V_c landed
    __syncthreads();
    fa::warp_pv<Element, kMT, kNT, kDT>(o, s, s_v + (c * kChunkN + lo.row_a) * kRowBytes, lo);
    fa::after_key_block(o, softmax.row_sum);
  }

  if (j < final_step) {
    fa::store_fragment_state<kHeadDim>(p, state_row0, warp_query_row0, o, softmax, lane);
    return;
  }
  fa::normalise_and_write_lse(o, softmax, true, scale_log2,
                              p.lse + fa::row_index0(p, tile.batch, tile.head) + row0, p.seqlen_q - row0,
                              lane);
  // Every copy has landed (the last chunk waited for all), and only this warp read its Q rows: they
  // stage O for 16-byte coalesced stores, as fa2_sm80's kEpilogueSmem.
  fa::store_o_through_shared<Element>(
      o, s_q + warp * kWarpRows * kRowBytes,
      fa::o_slice<Element>(p, tile.batch, tile.head) + warp_query_row0 * p.o_row_stride, p.o_row_stride,
      p.seqlen_q - warp_query_row0, lane);
}
