#pragma once
// fa3_sm90_bwd, a consumer warpgroup: 64 key rows of the CTA's key block (key group g) and one slice of
// the head dim (c) for dK and dV. Per step (query head, query block of kBlockM rows):
//   S^T = K_g Q^T and dP^T = V_g dO^T   wgmma, both operands from shared memory (K-major), one group
//   P^T = 2^(S^T scale log2e - LSE), masked -> 0; dS^T = P^T (dP^T - D)   registers (fa_backward.cuh)
//   dV += P^T dO, dK += dS^T Q           wgmma with A from registers (packed as the forward's P)
//   dS^T -> shared memory (buffer t % 2), then the CTA's dQ items: dQ_i += dS K over the kBlockN keys,
//   wgmma reading dS M-major from the dS^T tile and K N-major, added to the fp32 accumulator by REDs
//   (kDqMode 1: ordered across key blocks by a semaphore per query block; fa3_sm90_bwd_dq_add.cuh).
// The register map of every m64 accumulator is the forward's (fa3_sm90_consumer.cuh): here rows are keys
// (16 warp + lane/4 (+8)) and columns queries (8 t + 2 (lane%4) (+1)).
#include "fa3_sm90_bwd_layout.cuh"
#include "fa_backward.cuh"
#include "fa_mask.cuh"
#include "fa_tma.cuh"
#include "fa_wgmma.cuh"

namespace fa3 {

template <typename Element, class Cfg, bool Is_causal>
struct BwdConsumer {
  static constexpr int kMT = Cfg::kMT, kDkvTiles = Cfg::kDkvTiles, kQSteps = Cfg::kQSteps;
  using Ops = fa::WgmmaOps<Element, Cfg::kBlockM>;         // S^T, dP^T: N = the query block
  using DkvOps = fa::WgmmaOps<Element, Cfg::kDkvColumns>;  // dK, dV: N = this warpgroup's columns
  using DqOps = fa::WgmmaOps<Element, kDqChunkColumns>;    // dQ items: N = 64

  const fa::AttentionParams& p;
  unsigned char* smem;
  typename Cfg::Barriers& bars;
  const BwdSteps<Cfg, Is_causal>& w;
  const int wg;  // consumer index 0..kConsumers-1
  const int key_group = wg / Cfg::kDSplit, d_slice = wg % Cfg::kDSplit;
  const int tid = threadIdx.x % kWarpgroupThreads, warp = tid / 32, lane = tid % 32;
  const unsigned smem_base = fa::smem_addr(smem);
  unsigned base = smem_base;  // refreshed per step by refresh_base()
  const float scale_log2 = fa::scale_log2_of(p);

  float dk[kDkvTiles][4], dv[kDkvTiles][4];

  // Waits for every committed product; the registers they read or wrote are ordinary ones again.
  __device__ __forceinline__ void wait_all(unsigned (&pa)[kQSteps][4], unsigned (&pds)[kQSteps][4]) {
    fa::wgmma_wait<0>();
    fa::fence_operands(dk);
    fa::fence_operands(dv);
#pragma unroll
    for (int kk = 0; kk < kQSteps; ++kk)
#pragma unroll
      for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(pa[kk][e]), "+r"(pds[kk][e])::"memory");
  }

  // acc = rows (64 keys of this warpgroup's group) of `kv` times the slot's `qdo` tile transposed, over
  // the head dim: S^T = K_g Q^T or dP^T = V_g dO^T, committed as one group.
  __device__ __forceinline__ void issue_scores(float (&acc)[kMT][4], int kv_offset, int qdo_offset,
                                               int slot) {
    const unsigned kv_rows = base + kv_offset + key_group * kKeysPerConsumer * kPanelBytes;
    const unsigned qdo_tile = base + qdo_offset + slot * Cfg::kQBytes;
    fa::wgmma_fence();
    Ops::template ss<0>(acc, fa::k_major_descriptor(kv_rows, Cfg::kKVPanelBytes, 0),
                        fa::k_major_descriptor(qdo_tile, Cfg::kQPanelBytes, 0));
#pragma unroll
    for (int step = 1; step < Cfg::kDSteps; ++step)
      Ops::template ss<1>(acc, fa::k_major_descriptor(kv_rows, Cfg::kKVPanelBytes, step),
                          fa::k_major_descriptor(qdo_tile, Cfg::kQPanelBytes, step));
    fa::wgmma_commit();
  }

  // P^T from S^T (masked -> 0), in place, and packed as the wgmma A operand (16 queries per k-step).
  __device__ __forceinline__ void probabilities(float (&s)[kMT][4], unsigned (&pa)[kQSteps][4], int slot,
                                                int m0) {
    const float* lse_log2 =
        reinterpret_cast<const float*>(smem + Cfg::kStatsOffset + slot * Cfg::kStatsBytes);
    const int key0 = w.n0 + key_group * kKeysPerConsumer + 16 * warp + lane / 4;
    const int causal_offset = p.seqlen_k - p.seqlen_q;
    // Only blocks holding a key past n_k or above some row's diagonal are masked.
    const bool masked =
        w.n0 + Cfg::kBlockN > p.seqlen_k || (Is_causal && m0 + causal_offset < w.n0 + Cfg::kBlockN - 1);
#pragma unroll
    for (int t = 0; t < kMT; ++t) {
      const int col = 8 * t + 2 * (lane % 4);
      const float2 l = *reinterpret_cast<const float2*>(lse_log2 + col);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int query = m0 + col + (e & 1), key = key0 + 8 * (e >> 1);
        float prob = fa::prob_of(s[t][e], scale_log2, (e & 1) ? l.y : l.x);
        if (masked && key >= fa::key_limit<Is_causal>(query, p.seqlen_k, causal_offset)) prob = 0.f;
        s[t][e] = prob;
      }
    }
    pack(pa, s);
  }
  // dS^T = P^T (dP^T - D), packed. P^T is read back from its packed 16-bit form (the dV product's): S^T's
  // fp32 registers are then free before dP^T lands, which d64's 128-query steps need (the fp32 P^T spilled
  // 4 bytes there, CUDA 13.0). The tolerance model counts P's rounding in dS (numerics/tolerance.cpp).
  __device__ __forceinline__ void score_gradients(float (&dp)[kMT][4], const unsigned (&pa)[kQSteps][4],
                                                  unsigned (&pds)[kQSteps][4], int slot) {
    const float* delta =
        reinterpret_cast<const float*>(smem + Cfg::kStatsOffset + slot * Cfg::kStatsBytes) + Cfg::kBlockM;
#pragma unroll
    for (int t = 0; t < kMT; ++t) {
      const float2 dd = *reinterpret_cast<const float2*>(delta + 8 * t + 2 * (lane % 4));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float2 prob = unpack(pa[t / 2][2 * (t % 2) + h]);
        dp[t][2 * h] = fa::ds_of(prob.x, dp[t][2 * h], dd.x);
        dp[t][2 * h + 1] = fa::ds_of(prob.y, dp[t][2 * h + 1], dd.y);
      }
    }
    pack(pds, dp);
  }
  static __device__ __forceinline__ void pack(unsigned (&a)[kQSteps][4], const float (&c)[kMT][4]) {
#pragma unroll
    for (int kk = 0; kk < kQSteps; ++kk) {
      a[kk][0] = fa::ElementTraits<Element>::pack(c[2 * kk][0], c[2 * kk][1]);
      a[kk][1] = fa::ElementTraits<Element>::pack(c[2 * kk][2], c[2 * kk][3]);
      a[kk][2] = fa::ElementTraits<Element>::pack(c[2 * kk + 1][0], c[2 * kk + 1][1]);
      a[kk][3] = fa::ElementTraits<Element>::pack(c[2 * kk + 1][2], c[2 * kk + 1][3]);
    }
  }
  static __device__ __forceinline__ float2 unpack(unsigned packed) {
    if constexpr (fa::ElementTraits<Element>::kIsBf16) {
      return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&packed));
    } else {
      return __half22float2(*reinterpret_cast<const __half2*>(&packed));
    }
  }

  // acc += A (packed registers: P^T or dS^T) times the slot's `qdo` tile (dO or Q), this warpgroup's
  // columns, over the step's queries: dV += P^T dO or dK += dS^T Q, committed as one group.
  __device__ __forceinline__ void issue_dkv(float (&acc)[kDkvTiles][4], const unsigned (&a)[kQSteps][4],
                                            int qdo_offset, int slot) {
    const unsigned column_panels = d_slice * (Cfg::kDkvColumns / kBwdPanelColumns) * Cfg::kQPanelBytes;
    const unsigned tile = base + qdo_offset + slot * Cfg::kQBytes + column_panels;
    fa::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kQSteps; ++kk)
      DkvOps::template rs<1>(acc, a[kk], fa::n_major_descriptor(tile, Cfg::kQPanelBytes, kk), 1);
    fa::wgmma_commit();
  }

  // dS^T (this warpgroup's 64 keys x kBlockM queries) into the key-major tile, 128-byte swizzled as TMA
  // would write it (16-byte chunk c of key row r at c ^ (r % 8)): the fence then hands it to wgmma.
  __device__ __forceinline__ void store_ds(const unsigned (&pds)[kQSteps][4], unsigned ds_tile) {
    const int g = lane / 4, c = lane % 4;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = key_group * kKeysPerConsumer + 16 * warp + 8 * h + g;  // row % 8 == g
#pragma unroll
      for (int t = 0; t < kMT; ++t) {
        const unsigned address =
            ds_tile + (t / 8) * Cfg::kDsPanelBytes + row * kPanelBytes + (((t % 8) ^ g) * 16) + 4 * c;
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(address), "r"(pds[t / 2][2 * (t % 2) + h]) : "memory");
      }
    }
  }

  // One dQ item (64 query rows from row_tile x 64 columns from chunk) = dS K over the kBlockN keys.
  __device__ __forceinline__ void issue_dq(float (&dq)[kDqChunkColumns / 8][4], unsigned ds_tile,
                                           int row_tile, int chunk) {
    const unsigned ds_rows = ds_tile + row_tile * Cfg::kDsPanelBytes;
    const unsigned k_columns = base + Cfg::kKOffset + chunk * Cfg::kKVPanelBytes;
    fa::wgmma_fence();
    DqOps::template ss_tt<0>(dq, fa::n_major_descriptor(ds_rows, Cfg::kDsPanelBytes, 0),
                             fa::n_major_descriptor(k_columns, Cfg::kKVPanelBytes, 0));
#pragma unroll
    for (int step = 1; step < Cfg::kKeySteps; ++step)
      DqOps::template ss_tt<1>(dq, fa::n_major_descriptor(ds_rows, Cfg::kDsPanelBytes, step),
                               fa::n_major_descriptor(k_columns, Cfg::kKVPanelBytes, step));
    fa::wgmma_commit();
  }

  // The dQ item's addition to the fp32 accumulator and, deterministic mode, the turn per query block:
  // fa3_sm90_bwd_dq_add.cuh.
  __device__ __forceinline__ void bulk_add_dq(const float (&dq)[kDqChunkColumns / 8][4], float* accum, int m0,
                                              int row_tile, int chunk);
  __device__ __forceinline__ void add_dq(const float (&dq)[kDqChunkColumns / 8][4], float* accum, int m0,
                                         int row_tile, int chunk);
  __device__ __forceinline__ void wait_turn(const int* semaphore);
  __device__ __forceinline__ void pass_turn(int* semaphore);

  // The shared-memory base as a value the compiler cannot see through: the wgmma descriptors of a step are
  // then formed from it inside the step instead of being hoisted out of the loop, where 64-bit descriptors
  // of every k-step (their tiles' offsets depend on the warpgroup) held ~60 registers for the whole
  // mainloop and made ptxas spill and serialise the products (d128, 2 consumers: 588 bytes, CUDA 13.0).
  __device__ __forceinline__ void refresh_base() {
    asm volatile("mov.u32 %0, %1;\n" : "=r"(base) : "r"(smem_base));
  }

  __device__ __forceinline__ void step(int t) {
    refresh_base();
    const int slot = fa::LoadRing<Cfg::kStages>::slot(t);
    const int head = w.head(t), m0 = w.m0(t);
    unsigned pa[kQSteps][4], pds[kQSteps][4];
    {
      // S^T and dP^T as two groups: P^T is formed (and dV += P^T dO issued) while dP^T is still running,
      // and S^T's registers are free before dP^T's are needed.
      float s[kMT][4], dp[kMT][4];
      bars.q.wait_full_unbounded(t);  // the producer's bounded waits guard it
      issue_scores(s, Cfg::kKOffset, Cfg::kQOffset, slot);
      issue_scores(dp, Cfg::kVOffset, Cfg::kDoOffset, slot);
      fa::wgmma_wait<1>();
      fa::fence_operands(s);
      probabilities(s, pa, slot, m0);
      issue_dkv(dv, pa, Cfg::kDoOffset, slot);
      fa::wgmma_wait<1>();  // dP^T (dV may still run)
      fa::fence_operands(dp);
      score_gradients(dp, pa, pds, slot);
    }
    issue_dkv(dk, pds, Cfg::kQOffset, slot);
    const unsigned ds_tile = base + Cfg::kDsOffset + (t % kBwdDsBuffers) * Cfg::kDsBytes;
    // Warpgroups sharing a key group hold the same dS^T: the first of them stores it.
    if (d_slice == 0) store_ds(pds, ds_tile);
    fa::fence_shared_to_async_proxy();
#ifndef FA_MUTANT_BWD_RACE  // [bwd-race] dQ reads dS^T rows other warpgroups may not have stored yet
    // Also: every warpgroup is past step t-1's dQ products, which read the other buffer that step t+1
    // overwrites.
    fa::named_barrier_sync(kBwdDsReadyBarrier, Cfg::kConsumers * kWarpgroupThreads);
#endif
    const long long bh = static_cast<long long>(w.batch) * p.heads_q + head;
    float* accum = p.dq_accum + (Cfg::kDqBulkAdd ? bh * BwdDqTiles::head_floats(p.seqlen_q, Cfg::kHeadDim)
                                                 : bh * p.seqlen_q * Cfg::kHeadDim);
    int* semaphore = Cfg::kDeterministic ? p.dq_semaphore + bh * p.seqlen_q + m0 : nullptr;
#pragma unroll
    for (int i = 0; i < Cfg::kDqItemsPerConsumer; ++i) {
      const int item = wg * Cfg::kDqItemsPerConsumer + i;
      const int row_tile = item / Cfg::kDqChunks, chunk = item % Cfg::kDqChunks;
      float dq[kDqChunkColumns / 8][4];
      issue_dq(dq, ds_tile, row_tile, chunk);
      wait_all(pa, pds);
      fa::fence_operands(dq);
      if (Cfg::kDeterministic && i == 0) wait_turn(semaphore);
      if constexpr (Cfg::kDqBulkAdd)
        bulk_add_dq(dq, accum, m0, row_tile, chunk);
      else
        add_dq(dq, accum, m0, row_tile, chunk);
    }
    if (Cfg::kDeterministic) pass_turn(semaphore);
    // dK, dV (the readers of Q, dO) are complete. Released after the dQ additions so that a warpgroup
    // waiting for its turn forever holds its slot and the producer's bounded drain catches it.
    bars.q.release(t, true);  // every thread: fa3_sm90_bwd.cu's init says why
  }

  // dK = scale dS^T Q and dV, this warpgroup's keys and columns, straight from the accumulators.
  __device__ __forceinline__ void store_dkv() {
    const float dk_scale = fa::dk_scale_of(scale_log2);
    Element* dk_out = static_cast<Element*>(p.d_k) + w.batch * p.k_batch_stride + w.kv_head * p.k_head_stride;
    Element* dv_out = static_cast<Element*>(p.d_v) + w.batch * p.v_batch_stride + w.kv_head * p.v_head_stride;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int key = w.n0 + key_group * kKeysPerConsumer + 16 * warp + 8 * h + lane / 4;
      if (key >= p.seqlen_k) continue;
#pragma unroll
      for (int t = 0; t < kDkvTiles; ++t) {
        const int col = d_slice * Cfg::kDkvColumns + 8 * t + 2 * (lane % 4);
        *reinterpret_cast<unsigned*>(dk_out + key * p.k_row_stride + col) =
            fa::ElementTraits<Element>::pack(dk[t][2 * h] * dk_scale, dk[t][2 * h + 1] * dk_scale);
        *reinterpret_cast<unsigned*>(dv_out + key * p.v_row_stride + col) =
            fa::ElementTraits<Element>::pack(dv[t][2 * h], dv[t][2 * h + 1]);
      }
    }
  }

  __device__ __forceinline__ void run() {
#pragma unroll
    for (int t = 0; t < kDkvTiles; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) dk[t][e] = dv[t][e] = 0.f;
    fa::barrier_wait(&bars.kv_full, 0, "kv_full");
    for (int t = 0; t < w.count; ++t) step(t);
    store_dkv();
    // kDqBulk: the last item's copies must have read the staging tile before the CTA's shared memory goes.
    if (Cfg::kDqBulkAdd && tid == 0) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
  }
};

}  // namespace fa3
