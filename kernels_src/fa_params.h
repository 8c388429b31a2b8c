#pragma once
// Parameters of one attention launch: a plain struct shared by the host (C++20, g++) and the device
// (NVRTC). It uses only fundamental types so that it needs no header on either side, and the host copies
// it byte for byte into the kernel's single by-value argument.
//
// Layout (B, H, N, D) with explicit strides in elements, so that a view (a slice of a bigger tensor, a
// (B, N, H, D) tensor seen as (B, H, N, D)) needs no copy. GQA: query head h reads key/value head
// h / (h_q / h_kv). Causal masks are bottom-right aligned: query row i sees key j when
// j <= i + (n_k - n_q).

namespace fa {

struct AttentionParams {
  // Forward tensors. q, k, v: (B, H_q|H_kv, N_q|N_k, D), element type fixed by the kernel instance.
  const void* q;
  const void* k;
  const void* v;
  void* o;     // (B, H_q, N_q, D), same element type as q (bf16 for the FP8 kernels)
  float* lse;  // (B, H_q, N_q), natural log: m * scale + log(l); -inf for a fully masked row
  // Backward tensors (null in a forward launch).
  const void* d_o;  // (B, H_q, N_q, D)
  void* d_q;        // (B, H_q, N_q, D)
  void* d_k;        // (B, H_kv, N_k, D)
  void* d_v;        // (B, H_kv, N_k, D)
  float* delta;     // (B, H_q, N_q): rowsum(dO * O), written by the backward preprocessing
  float* dq_accum;  // (B, H_q, N_q, D) fp32 accumulator for dQ
  // fa3_sm90_bwd's deterministic dQ mode: one counter per query row (B, H_q, N_q), of which the first row
  // of each query block is used; zeroed by the backward preprocessing when not null.
  int* dq_semaphore;
  // Scratch for the multi-launch families (naive: S and P; fa1: running m and l), in floats.
  float* scratch_s;
  float* scratch_p;
  float* scratch_m;
  float* scratch_l;
  float* scratch_o;  // fa1: fp32 running output (B, H_q, N_q, D)
  // fa3_sm90 FP8: V^T (B, H_kv, D, N_k padded), written by its transpose launch (fa3_sm90_transpose.cuh)
  // for the K-major B operand of P V.
  void* v_transposed;
  // fa3_sm90 kPersistent = 2: the dynamic tile scheduler's two counters (fa_tile_scheduler.cuh's
  // TileCounter), zero at every launch.
  int* tile_counter;

  // Strides in elements: batch, head, row. The last dimension (D) is contiguous.
  long long q_batch_stride, q_head_stride, q_row_stride;
  long long k_batch_stride, k_head_stride, k_row_stride;
  long long v_batch_stride, v_head_stride, v_row_stride;
  long long o_batch_stride, o_head_stride, o_row_stride;

  int batch;
  int heads_q;
  int heads_kv;
  int seqlen_q;
  int seqlen_k;
  int head_dim;
  int step;  // multi-launch families: which launch this is (fa1's outer key block, naive's pass)

  float softmax_scale;       // usually 1/sqrt(D)
  float softmax_scale_log2;  // softmax_scale * log2(e): scores enter exp2 with one FFMA

  // FP8: S = (Q K^T) * q_descale * k_descale; O = (P V) * v_descale / p_scale. Per-tensor factors when the
  // pointers are null, else per-block factors indexed (B, H, block): block = row / descale_block_rows of
  // each (batch, head) matrix, ceil(N / descale_block_rows) blocks per matrix (numerics' quantize_fp8).
  float q_descale, k_descale, v_descale;
  const float* q_descale_blocks;
  const float* k_descale_blocks;
  const float* v_descale_blocks;
  int descale_block_rows;  // per-block scaling only; a multiple of 32 (one P.V k-step shares a V factor)
  float p_scale;           // P is rounded to FP8 as P * p_scale (a power of two <= the format's max)

  // FP8 operands quantised on the device (fp8_quantize.cuh, launched before the forward), indexed Q, K, V:
  // the bf16 inputs ((B, H, N, D), rows of D contiguous), where their codes go (the memory q, k, v point
  // at) and their per-block descales (the memory of q/k/v_descale_blocks; per-tensor scaling writes its one
  // factor into every block). Null when the host quantised.
  const void* fp8_source[3];
  void* fp8_codes[3];
  float* fp8_descales[3];
  const float* fp8_rotation_signs;  // (D) +-1: incoherent processing's D for Q and K; null: no rotation
  double* fp8_amax;                 // per-tensor scaling: one amax per block of Q, K, V, then 3 scales
};

}  // namespace fa
