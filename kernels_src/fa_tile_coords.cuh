#pragma once
// Tile coordinates and pointer set-up: which (batch, head) slice of each tensor a CTA reads and writes,
// the key/value head of a query head (GQA), and the first row of a (batch, head)'s LSE, D and fp32 rows.
// Every sm80-era family starts from these, so a change of layout or of the GQA mapping is made here once.
#include "fa_params.h"

namespace fa {

// The key/value head a query head reads: heads_q / heads_kv consecutive query heads share one.
__device__ __forceinline__ int kv_head_of(const AttentionParams& p, int head) {
  return head / (p.heads_q / p.heads_kv);
}

// (N, D) slices of one (batch, head) with row strides q_row_stride etc.; dO and dQ share O's strides
// (dK and dV: fa_bwd_blocks.cuh's store_dk_dv).
template <typename T>
__device__ __forceinline__ const T* q_slice(const AttentionParams& p, int batch, int head) {
  return static_cast<const T*>(p.q) + batch * p.q_batch_stride + head * p.q_head_stride;
}
template <typename T>
__device__ __forceinline__ const T* k_slice(const AttentionParams& p, int batch, int kv_head) {
  return static_cast<const T*>(p.k) + batch * p.k_batch_stride + kv_head * p.k_head_stride;
}
template <typename T>
__device__ __forceinline__ const T* v_slice(const AttentionParams& p, int batch, int kv_head) {
  return static_cast<const T*>(p.v) + batch * p.v_batch_stride + kv_head * p.v_head_stride;
}
template <typename T>
__device__ __forceinline__ T* o_slice(const AttentionParams& p, int batch, int head) {
  return static_cast<T*>(p.o) + batch * p.o_batch_stride + head * p.o_head_stride;
}
template <typename T>
__device__ __forceinline__ const T* d_o_slice(const AttentionParams& p, int batch, int head) {
  return static_cast<const T*>(p.d_o) + batch * p.o_batch_stride + head * p.o_head_stride;
}
template <typename T>
__device__ __forceinline__ T* d_q_slice(const AttentionParams& p, int batch, int head) {
  return static_cast<T*>(p.d_q) + batch * p.o_batch_stride + head * p.o_head_stride;
}
// Index of the first row of (batch, head) in the (B, H_q, N_q) row arrays: LSE, D, fa1's m and l, and
// (times D) the fp32 (B, H_q, N_q, D) ones.
__device__ __forceinline__ long long row_index0(const AttentionParams& p, int batch, int head) {
  return (static_cast<long long>(batch) * p.heads_q + head) * p.seqlen_q;
}

// The query tile of a CTA in the forward grid (ceil(N_q / kBlockM), H_q, B) and in the dQ pass's.
struct QueryTile {
  int m0, head, batch, kv_head;
};
template <int kBlockM>
__device__ __forceinline__ QueryTile query_tile(const AttentionParams& p) {
  QueryTile t;
  const int m_block = blockIdx.x;
  t.head = blockIdx.y;
  t.batch = blockIdx.z;
  t.kv_head = kv_head_of(p, t.head);  // before m0: the order the kernels computed them in (same PTX)
  t.m0 = m_block * kBlockM;
  return t;
}

}  // namespace fa
