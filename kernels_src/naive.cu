// naive: standard attention as the textbook writes it, in three launches that go through device memory:
//   step 0: S = Q K^T * scale  -> scratch_s (B, H_q, N_q, N_k) fp32, masked entries -inf
//   step 1: P = softmax(S)     -> scratch_p (same shape) fp32, and the LSE of each row
//   step 2: O = P V            -> o (B, H_q, N_q, D)
// The baseline for speed, memory (2 * N_q * N_k floats per head) and traffic against the fused families.
// SIMT fp32 FMAs on kTile x kTile shared-memory tiles: no tensor cores, on purpose (the lesson's version).
#include "fa_epilogue.cuh"
#include "fa_mask.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_types.cuh"

namespace naive {

template <typename Element>
__device__ __forceinline__ float to_float(Element x) {
  return static_cast<float>(x);
}

// C (rows x cols) = A (rows x kdim) * B, tiled kTile x kTile; A row-major with stride lda; B is either
// (cols x kdim) row-major (b_transposed: the K of S = Q K^T) or (kdim x cols) row-major (the V of O = P V).
template <int kTile, typename AType, typename BType, bool b_transposed, typename Store>
__device__ __forceinline__ void gemm_tile(const AType* a, long long lda, const BType* b, long long ldb,
                                          int rows, int cols, int kdim, Store&& store) {
  __shared__ float a_tile[kTile][kTile + 1];  // +1: column reads hit distinct banks
  __shared__ float b_tile[kTile][kTile + 1];
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
  const int row = blockIdx.x * kTile + ty, col = blockIdx.y * kTile + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < kdim; k0 += kTile) {
    const int ar = blockIdx.x * kTile + ty, ac = k0 + tx;
    a_tile[ty][tx] = (ar < rows && ac < kdim) ? to_float(a[ar * lda + ac]) : 0.f;
    const int bc = blockIdx.y * kTile + ty, bk = k0 + tx;  // b_tile[n][k]
    if (b_transposed) {
      b_tile[ty][tx] = (bc < cols && bk < kdim) ? to_float(b[bc * ldb + bk]) : 0.f;
    } else {
      const int bk2 = k0 + ty, bc2 = blockIdx.y * kTile + tx;  // b_tile[k][n] read as [tx][ty] below
      b_tile[tx][ty] = (bk2 < kdim && bc2 < cols) ? to_float(b[bk2 * ldb + bc2]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc = fmaf(a_tile[ty][kk], b_tile[tx][kk], acc);
    __syncthreads();
  }
  if (row < rows && col < cols) store(row, col, acc);
}

}  // namespace naive

// Step 0: grid (ceil(N_q / kTile), ceil(N_k / kTile), B * H_q), kTile^2 threads.
template <typename Element, int kTile, bool Is_causal>
__global__ void __launch_bounds__(kTile* kTile) naive_scores(const __grid_constant__ fa::AttentionParams p) {
  const int bh = blockIdx.z, batch = bh / p.heads_q, head = bh % p.heads_q;
  const int kv_head = head / (p.heads_q / p.heads_kv);
  const Element* q = static_cast<const Element*>(p.q) + batch * p.q_batch_stride + head * p.q_head_stride;
  const Element* k = static_cast<const Element*>(p.k) + batch * p.k_batch_stride + kv_head * p.k_head_stride;
  float* s = p.scratch_s + static_cast<long long>(bh) * p.seqlen_q * p.seqlen_k;
  const float scale = fa::scale_log2_of(p) * fa::kLn2;  // softmax_scale, through the shared switch
  const int offset = p.seqlen_k - p.seqlen_q;
  naive::gemm_tile<kTile, Element, Element, true>(
      q, p.q_row_stride, k, p.k_row_stride, p.seqlen_q, p.seqlen_k, p.head_dim, [&](int r, int c, float acc) {
        const bool masked = c >= fa::key_limit<Is_causal>(r, p.seqlen_k, offset);
        s[static_cast<long long>(r) * p.seqlen_k + c] = masked ? fa::neg_inf() : acc * scale;
      });
}

// Step 1: one block of kThreads per row: P = exp(S - max) / sum, LSE = max + log(sum). P is stored
// rounded to the input type (as a float), which is what the fused kernels feed the P V product.
template <typename Element, int kThreads>
__global__ void __launch_bounds__(kThreads) naive_softmax(const __grid_constant__ fa::AttentionParams p) {
  __shared__ float reduce[kThreads / 32];
  const long long row = blockIdx.x;  // over B * H_q * N_q
  const float* s = p.scratch_s + row * p.seqlen_k;
  float* out = p.scratch_p + row * p.seqlen_k;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  auto block_reduce = [&](float x, bool is_max) {
    for (int o = 16; o > 0; o /= 2) {
      const float y = __shfl_xor_sync(0xffffffffu, x, o);
      x = is_max ? fmaxf(x, y) : x + y;
    }
    if (lane == 0) reduce[warp] = x;
    __syncthreads();
    x = reduce[0];
    for (int w = 1; w < kThreads / 32; ++w) x = is_max ? fmaxf(x, reduce[w]) : x + reduce[w];
    __syncthreads();
    return x;
  };
  float m = fa::neg_inf();
  for (int j = threadIdx.x; j < p.seqlen_k; j += kThreads) m = fmaxf(m, s[j]);
  m = block_reduce(m, true);
  // Scores are already scaled; exp(x) = 2^(x log2 e). The guard turns a fully masked row's max to 0.
  const float m_log2 = fa::guarded_max_log2(m, fa::kLog2e);
  // The same per-row choice of exponent path as the flash kernels (fa_softmax.cuh): exact for huge rows.
  const bool exact = fa::needs_exact_exponent(m_log2);
  auto weight = [&](float x) {
    return exact ? fa::exp2_shifted<true>(x, fa::kLog2e, m_log2)
                 : fa::exp2_shifted<false>(x, fa::kLog2e, m_log2);
  };
  float sum = 0.f;
  for (int j = threadIdx.x; j < p.seqlen_k; j += kThreads) sum += weight(s[j]);
  sum = block_reduce(sum, false);
  const float inv = sum == 0.f ? 0.f : 1.f / sum;
  for (int j = threadIdx.x; j < p.seqlen_k; j += kThreads)
    out[j] = naive::to_float(Element(weight(s[j]) * inv));
  if (threadIdx.x == 0) p.lse[row] = fa::row_lse(m, sum, fa::kLog2e);
}

// Step 2: grid (ceil(N_q / kTile), ceil(D / kTile), B * H_q), kTile^2 threads.
template <typename Element, int kTile>
__global__ void __launch_bounds__(kTile* kTile) naive_output(const __grid_constant__ fa::AttentionParams p) {
  const int bh = blockIdx.z, batch = bh / p.heads_q, head = bh % p.heads_q;
  const int kv_head = head / (p.heads_q / p.heads_kv);
  const float* prob = p.scratch_p + static_cast<long long>(bh) * p.seqlen_q * p.seqlen_k;
  const Element* v = static_cast<const Element*>(p.v) + batch * p.v_batch_stride + kv_head * p.v_head_stride;
  Element* o = static_cast<Element*>(p.o) + batch * p.o_batch_stride + head * p.o_head_stride;
  naive::gemm_tile<kTile, float, Element, false>(
      prob, p.seqlen_k, v, p.v_row_stride, p.seqlen_q, p.head_dim, p.seqlen_k,
      [&](int r, int c, float acc) { o[static_cast<long long>(r) * p.o_row_stride + c] = Element(acc); });
}
