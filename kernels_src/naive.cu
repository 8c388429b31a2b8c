// naive: standard attention as the textbook writes it, in three launches that go through device memory:
//   step 0: S = Q K^T * scale  -> scratch_s (B, H_q, N_q, N_k) fp32, masked entries -inf
//   step 1: P = softmax(S)     -> scratch_p (same shape) fp32 (values of the input type), and the LSE
//   step 2: O = P V            -> o (B, H_q, N_q, D)
// The baseline for speed, memory (2 * N_q * N_k floats per head) and traffic against the fused families.
// The two GEMMs run on tensor cores (mma.sync m16n8k16, fp32 accumulators), as cuBLAS would run them, so
// that the comparison with the fused kernels measures the memory traffic of S and P, not SIMT arithmetic
// (the SIMT version measured 6.1 TFLOP/s at d 128 on the H200, 2026-11-29). What keeps it "standard
// attention" is that S and P make the round trip through device memory.
#include "fa_arch.h"
#include "fa_epilogue.cuh"
#include "fa_mask.cuh"
#include "fa_mma.cuh"
#include "fa_params.h"
#include "fa_softmax.cuh"
#include "fa_tile_coords.cuh"
#include "fa_types.cuh"

namespace naive {

// One CTA computes a kTile x kTile block of C = A B over k in chunks of kChunk: kTile / 16 warps, each
// 16 rows x kTile columns (kTile / 8 mma n-tiles). Operands are staged in shared memory as 16-bit values,
// A as [row][k] and B as [col][k] (the "col" operand of mma.row.col), rows padded to kStride elements so
// that the eight rows one fragment load touches fall in distinct banks.
constexpr int kChunk = 16;
constexpr int kStride = kChunk + 8;  // 48 bytes per row: word offsets 12 g + c cover 32 banks

template <typename Element>
__device__ __forceinline__ Element to_element(float x) {
  return Element(x);
}

template <int kTile, typename Element, typename LoadA, typename LoadB, typename Store>
__device__ __forceinline__ void mma_gemm_tile(int kdim, LoadA&& load_a, LoadB&& load_b, Store&& store) {
  constexpr int kWarps = kTile / 16, kThreads = kWarps * 32, kNT = kTile / 8;
  __shared__ __align__(16) Element a_s[kTile][kStride];
  __shared__ __align__(16) Element b_s[kTile][kStride];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, c = lane % 4;
  float acc[kNT][4];
#pragma unroll
  for (int j = 0; j < kNT; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  const unsigned* a32 = reinterpret_cast<const unsigned*>(&a_s[0][0]);
  const unsigned* b32 = reinterpret_cast<const unsigned*>(&b_s[0][0]);
  constexpr int kWords = kStride / 2;
  const int row0 = warp * 16;
  for (int k0 = 0; k0 < kdim; k0 += kChunk) {
    // Each thread stages kTile * kChunk / kThreads elements of each operand (zero past the edges).
    for (int i = threadIdx.x; i < kTile * kChunk; i += kThreads) {
      const int r = i / kChunk, k = i % kChunk;
      a_s[r][k] = load_a(r, k0 + k);
      b_s[r][k] = load_b(r, k0 + k);
    }
    __syncthreads();
    unsigned a[4];
    a[0] = a32[(row0 + g) * kWords + c];
    a[1] = a32[(row0 + g + 8) * kWords + c];
    a[2] = a32[(row0 + g) * kWords + 4 + c];
    a[3] = a32[(row0 + g + 8) * kWords + 4 + c];
#pragma unroll
    for (int j = 0; j < kNT; ++j)
      fa::mma_16816<Element>(acc[j], a, b32[(j * 8 + g) * kWords + c], b32[(j * 8 + g) * kWords + 4 + c]);
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < kNT; ++j) {
    const int col = j * 8 + 2 * c;
    store(row0 + g, col, acc[j][0]);
    store(row0 + g, col + 1, acc[j][1]);
    store(row0 + g + 8, col, acc[j][2]);
    store(row0 + g + 8, col + 1, acc[j][3]);
  }
}

}  // namespace naive

// Step 0: grid (ceil(N_q / kTile), ceil(N_k / kTile), B * H_q), kTile / 16 warps.
template <typename Element, int kTile, bool Is_causal>
__global__ void __launch_bounds__(kTile / 16 * fa::kWarpSize)
    naive_scores(const __grid_constant__ fa::AttentionParams p) {
  const int bh = blockIdx.z, batch = bh / p.heads_q, head = bh % p.heads_q;
  const int kv_head = fa::kv_head_of(p, head);
  const Element* q = fa::q_slice<Element>(p, batch, head);
  const Element* k = fa::k_slice<Element>(p, batch, kv_head);
  float* s = p.scratch_s + static_cast<long long>(bh) * p.seqlen_q * p.seqlen_k;
  const float scale = fa::scale_log2_of(p) * fa::kLn2;  // softmax_scale, through the shared switch
  const int offset = p.seqlen_k - p.seqlen_q;
  const int r0 = blockIdx.x * kTile, c0 = blockIdx.y * kTile;
  const Element zero = naive::to_element<Element>(0.f);
  naive::mma_gemm_tile<kTile, Element>(
      p.head_dim,
      [&](int r, int d) {
        const int row = r0 + r;
        return row < p.seqlen_q && d < p.head_dim ? q[static_cast<long long>(row) * p.q_row_stride + d]
                                                  : zero;
      },
      [&](int n, int d) {
        const int col = c0 + n;
        return col < p.seqlen_k && d < p.head_dim ? k[static_cast<long long>(col) * p.k_row_stride + d]
                                                  : zero;
      },
      [&](int r, int n, float acc) {
        const int row = r0 + r, col = c0 + n;
        if (row >= p.seqlen_q || col >= p.seqlen_k) return;
        const bool masked = col >= fa::key_limit<Is_causal>(row, p.seqlen_k, offset);
        s[static_cast<long long>(row) * p.seqlen_k + col] = masked ? fa::neg_inf() : acc * scale;
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
    out[j] = static_cast<float>(Element(weight(s[j]) * inv));
  if (threadIdx.x == 0) p.lse[row] = fa::row_lse(m, sum, fa::kLog2e);
}

// Step 2: grid (ceil(N_q / kTile), ceil(D / kTile), B * H_q), kTile / 16 warps. P holds values of the input
// type (step 1 rounded them), so converting it back to Element for the tensor cores is exact.
template <typename Element, int kTile>
__global__ void __launch_bounds__(kTile / 16 * fa::kWarpSize)
    naive_output(const __grid_constant__ fa::AttentionParams p) {
  const int bh = blockIdx.z, batch = bh / p.heads_q, head = bh % p.heads_q;
  const int kv_head = fa::kv_head_of(p, head);
  const float* prob = p.scratch_p + static_cast<long long>(bh) * p.seqlen_q * p.seqlen_k;
  const Element* v = fa::v_slice<Element>(p, batch, kv_head);
  Element* o = fa::o_slice<Element>(p, batch, head);
  const int r0 = blockIdx.x * kTile, d0 = blockIdx.y * kTile;
  const Element zero = naive::to_element<Element>(0.f);
  naive::mma_gemm_tile<kTile, Element>(
      p.seqlen_k,
      [&](int r, int key) {
        const int row = r0 + r;
        return row < p.seqlen_q && key < p.seqlen_k
                   ? naive::to_element<Element>(prob[static_cast<long long>(row) * p.seqlen_k + key])
                   : zero;
      },
      // B as [col][k]: V read transposed, (d0 + n, key) = V[key][d0 + n].
      [&](int n, int key) {
        const int col = d0 + n;
        return col < p.head_dim && key < p.seqlen_k ? v[static_cast<long long>(key) * p.v_row_stride + col]
                                                    : zero;
      },
      [&](int r, int n, float acc) {
        const int row = r0 + r, col = d0 + n;
        if (row < p.seqlen_q && col < p.head_dim)
          o[static_cast<long long>(row) * p.o_row_stride + col] = Element(acc);
      });
}
