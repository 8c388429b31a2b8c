// flash_decode: the split-KV forward for decoding (Flash-Decoding): a few query rows against a long KV cache.
//
// FlashAttention's grid has one CTA per (query block, head, batch): at n_q = 1 that is b x h CTAs for 132
// SMs, most of the GPU idle while K and V are read once. Here the key blocks of every (batch, kv head) are
// cut into kSplits x kNWarps contiguous ranges: kSplits CTAs, and inside each CTA every warp walks its own
// range with its own two-slot cp.async ring (no CTA barrier in the loop), running the one online softmax
// (fa_softmax.cuh) on mma.sync tiles (fa_warp_mma.cuh), and writes a partial (O unnormalised, m, l) per
// row to scratch. A second kernel merges the partials of each row with the same rescale rule
// (fa::part_weight), normalises once and writes O and the LSE (fa_epilogue.cuh's row_lse).
//
// GQA: the h_q / h_kv query heads that share a key/value head are packed into the rows of one tile
// (packed row r = head_in_group x n_q + query row), so K and V are read once per group, not once per query
// head, and the 16-row mma tiles fill up (n_q = 1 with 8 heads a group: 8 useful rows of 16, not 1).
//
// Causal masks are bottom-right aligned (query row i sees key j <= i + n_k - n_q); only the key blocks that
// query row 0 cannot see in full are masked (fa_block_range.cuh), with each packed row's own query row.
#include "fa_arch.h"
#include "fa_block_range.cuh"
#include "fa_copy.cuh"
#include "fa_epilogue.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_tile_coords.cuh"
#include "fa_types.cuh"
#include "fa_warp_mma.cuh"
#include "flash_decode_config.h"

// Step 0. Grid (kSplits, h_kv x row blocks, B); 32 x kNWarps threads; dynamic shared fdec::shared_bytes.
// Writes partial p = split x kNWarps + warp of row R (R = (batch x h_q + head) x n_q + i, the LSE's index)
// at scratch_m/l[p x rows + R] and scratch_o[(p x rows + R) x D ...], rows = B x h_q x n_q.
template <typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, int kSplits, bool Is_causal>
__global__ void __launch_bounds__(fa::kWarpSize* kNWarps)
    flash_decode_split(const __grid_constant__ fa::AttentionParams p) {
  constexpr fdec::Tunables kT{kHeadDim, 2, kBlockM, kBlockN, kNWarps, kSplits};
  static_assert(fdec::violation(kT) == nullptr, "flash_decode config breaks a rule of flash_decode_config.h");
  constexpr int kThreads = fdec::threads(kT), kMT = kBlockM / 16, kNT = kBlockN / 8, kDT = kHeadDim / 8;
  constexpr int kRowBytes = kHeadDim * 2, kKVBytes = fdec::kv_tile_bytes(kT);
  extern __shared__ __align__(128) unsigned char smem[];

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int row_blocks = fdec::row_blocks(kT, p.heads_q, p.heads_kv, p.seqlen_q);
  const int split = blockIdx.x, kv_head = blockIdx.y / row_blocks, batch = blockIdx.z;
  const int group = p.heads_q / p.heads_kv;
  const int packed_rows = fdec::packed_rows(p.heads_q, p.heads_kv, p.seqlen_q);
  const int r0 = (blockIdx.y % row_blocks) * kBlockM;  // the tile's first packed row
  const int causal_offset = p.seqlen_k - p.seqlen_q;
  const float scale_log2 = fa::scale_log2_of(p);

  // Q: the tile's packed rows, query head kv_head x group + r / n_q, query row r % n_q.
  const Element* q = static_cast<const Element*>(p.q) + batch * p.q_batch_stride +
                     static_cast<long long>(kv_head) * group * p.q_head_stride;
  const unsigned s_q = fa::smem_addr(smem);
  fa::load_rows_async<kBlockM, kHeadDim, kThreads, Element>(
      s_q,
      [&](int r) -> const Element* {
        const int packed = r0 + r;
        return q + (packed / p.seqlen_q) * p.q_head_stride + (packed % p.seqlen_q) * p.q_row_stride;
      },
      packed_rows - r0, tid);
  fa::cp_async_commit();

  // This warp's key blocks [first, first + count): the last query row sees the most keys.
  const int key_blocks = fa::key_block_count<Is_causal>(0, p.seqlen_q, kBlockN, p.seqlen_q, p.seqlen_k);
  const int partial = split * kNWarps + warp;
  const int per_partial = fdec::blocks_per_partial(kT, key_blocks);
  const int first = partial * per_partial;
  const int count = max(0, min(key_blocks, first + per_partial) - first);
  const int unmasked_limit = fa::unmasked_key_limit<Is_causal>(0, p.seqlen_q, p.seqlen_k);

  const Element* k = fa::k_slice<Element>(p, batch, kv_head);
  const Element* v = fa::v_slice<Element>(p, batch, kv_head);
  const unsigned s_ring = s_q + fdec::q_tile_bytes(kT) + warp * fdec::warp_ring_bytes(kT);
  auto slot = [&](int it) { return s_ring + (it % fdec::kStages) * 2 * kKVBytes; };  // K, then V
  auto load_kv = [&](int it) {
    const int nb = first + it;
    fa::load_tile_async<kBlockN, kHeadDim, 32, true>(slot(it), k + nb * kBlockN * p.k_row_stride,
                                                     p.k_row_stride, p.seqlen_k - nb * kBlockN, lane);
    fa::load_tile_async<kBlockN, kHeadDim, 32, true>(slot(it) + kKVBytes, v + nb * kBlockN * p.v_row_stride,
                                                     p.v_row_stride, p.seqlen_k - nb * kBlockN, lane);
  };
  if (count > 0) load_kv(0);
  fa::cp_async_commit();
  fa::cp_async_wait<1>();  // Q landed (this thread's copies) ...
  __syncthreads();         // ... and everyone's

  // The query row of each of this thread's rows (for the causal mask).
  int query_row[2 * kMT];
#pragma unroll
  for (int r = 0; r < 2 * kMT; ++r) query_row[r] = (r0 + 16 * (r / 2) + 8 * (r % 2) + lane / 4) % p.seqlen_q;

  const fa::LaneOffsets lo(lane);
  float o[kMT][kDT][4];
  fa::clear_accumulators(o);
  fa::OnlineSoftmax<kMT> softmax;
  softmax.init();

  for (int it = 0; it < count; ++it) {
    if (it + 1 < count) load_kv(it + 1);  // into the slot block it - 1 used: the warp left it below
    fa::cp_async_commit();                // one group per block (empty at the end): the count stays uniform
    fa::cp_async_wait<1>();  // all but the newest group: block it landed (this lane's copies) ...
    __syncwarp();            // ... and every lane's
    const int nb = first + it;
    float s[kMT][kNT][4];
    fa::clear_accumulators(s);
    fa::warp_qk<Element, kMT, kNT, kHeadDim>(s, s_q + lo.row_a * kRowBytes, slot(it) + lo.row_b * kRowBytes,
                                             lo);
    if (fa::key_block_needs_mask(nb, kBlockN, unmasked_limit))
      fa::apply_mask_to_rows<Is_causal>(s, query_row, nb * kBlockN + 2 * (lane % 4), p.seqlen_k,
                                        causal_offset);
    softmax.step(s, o, scale_log2);
    fa::warp_pv<Element, kMT, kNT, kDT>(o, s, slot(it) + kKVBytes + lo.row_a * kRowBytes, lo);
    fa::after_key_block(o, softmax.row_sum);
    __syncwarp();  // every lane is done with this slot before block it + 2 is copied into it
  }

  // The partial of each valid row: m, the full row sum l (quad-reduced), O unnormalised.
  const long long rows = static_cast<long long>(p.batch) * p.heads_q * p.seqlen_q;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float sum = fa::quad_sum(softmax.row_sum[2 * mt + h]);  // all 32 lanes, before any branch
      const int packed = r0 + 16 * mt + 8 * h + lane / 4;
      if (packed >= packed_rows) continue;
      const int head = kv_head * group + packed / p.seqlen_q;
      const long long row =
          (static_cast<long long>(batch) * p.heads_q + head) * p.seqlen_q + packed % p.seqlen_q;
      fa::store_row_state<kHeadDim>(p, partial * rows + row, o, mt, h, softmax.row_max[2 * mt + h], sum,
                                    lane);
    }
}

// Step 1. Grid (B x h_q x n_q): one CTA per row R, fdec::combine_threads(D) threads, thread t merging
// columns 2t and 2t + 1 of the kPartials partials: M = max m_p; w_p = exp(m_p - M) (fa::part_weight, the
// online softmax's own rescale); l = sum w_p l_p; O = sum w_p O_p / l; LSE = M + log l (fa::row_lse).
// A row no partial saw a key of (m = -inf everywhere) gets O = 0 and LSE = -inf, as the other families.
template <typename Element, int kHeadDim, int kPartials>
__global__ void __launch_bounds__(fdec::combine_threads(kHeadDim))
    flash_decode_combine(const __grid_constant__ fa::AttentionParams p) {
  const long long rows = static_cast<long long>(p.batch) * p.heads_q * p.seqlen_q;
  const long long row = blockIdx.x;
  const int col = 2 * threadIdx.x;
  const float scale_log2 = fa::scale_log2_of(p);
  float m_all = fa::neg_inf();
  for (int part = 0; part < kPartials; ++part) m_all = fmaxf(m_all, p.scratch_m[part * rows + row]);
  const float m_all_log2 = fa::guarded_max_log2(m_all, scale_log2);
  float l = 0.f, o0 = 0.f, o1 = 0.f;
  for (int part = 0; part < kPartials; ++part) {
    const long long idx = part * rows + row;
    const float w = fa::part_weight(p.scratch_m[idx], m_all_log2, scale_log2);
    l = fmaf(p.scratch_l[idx], w, l);
    const float2 partial_o = *reinterpret_cast<const float2*>(p.scratch_o + idx * kHeadDim + col);
    o0 = fmaf(partial_o.x, w, o0);
    o1 = fmaf(partial_o.y, w, o1);
  }
  // Under [normalize-in-loop] every partial was divided in its loop already, as the other families' O.
  const float inv = fa::epilogue_inverse_sum(l);
  if (threadIdx.x == 0) p.lse[row] = fa::row_lse(m_all, l, scale_log2);
  const int i = static_cast<int>(row % p.seqlen_q);
  const int head = static_cast<int>(row / p.seqlen_q % p.heads_q);
  const int batch = static_cast<int>(row / p.seqlen_q / p.heads_q);
  Element* out = fa::o_slice<Element>(p, batch, head) + i * p.o_row_stride + col;
  *reinterpret_cast<unsigned*>(out) = fa::ElementTraits<Element>::pack(o0 * inv, o1 * inv);
}
