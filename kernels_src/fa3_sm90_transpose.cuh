#pragma once
// fa3_sm90 FP8: V (B, H_kv, N_k, D) codes to V^T (B, H_kv, D, transposed_keys(N_k)) in the key order that
// the forward's P V product reads (fa3_sm90_consumer.cuh): within each 32 keys, byte position p holds key
// 16 (p / 16) + 2 c + (j & 1) + 8 (j >> 1) with c = (p % 16) / 4 and j = p % 4 (permuted_key), i.e. the keys
// {2c, 2c+1, 8+2c, 9+2c} that thread column c of a wgmma accumulator owns, in A-operand slots 4c..4c+3.
// Keys at or past N_k are written as zero codes.
//
// One CTA per kTransposeKeys (64) keys of one (batch, kv head): the 64 x D byte block is read with
// 16-byte loads (a warp reads whole rows: coalesced), turned in shared memory and written as D rows of
// 64 bytes in 4-byte words (16 threads per row). It moves 2 |V| bytes, ~2% of a d128 n8192 forward at
// the H200's copy rate; the forward's in-kernel alternative (kTransposeV = 1) is FlashAttention-3's
// transpose in shared memory, fa3_sm90_v_transpose_smem.cuh.
#include "fa3_sm90_config.h"
#include "fa3_sm90_v_transpose_map.h"  // permuted_key, which the in-kernel transpose writes by too
#include "fa_params.h"
#include "fa_tma_params.h"

template <int kHeadDim>
__global__ void __launch_bounds__(fa3::kTransposeThreads)
    fa3_sm90_transpose_v(const __grid_constant__ fa::AttentionParams p,
                         const __grid_constant__ fa::TmaDescriptors) {
  constexpr int kKeys = fa3::kTransposeKeys;
  constexpr int kPitch = kHeadDim + 16;  // 16 bytes of padding: rows 16-byte aligned, fewer bank conflicts
  __shared__ __align__(16) unsigned char tile[kKeys * kPitch];
  const int key0 = blockIdx.x * kKeys, kv_head = blockIdx.y, batch = blockIdx.z;
  const unsigned char* v =
      static_cast<const unsigned char*>(p.v) + batch * p.v_batch_stride + kv_head * p.v_head_stride;
  constexpr int kChunks = kHeadDim / 16;
#pragma unroll
  for (int i = threadIdx.x; i < kKeys * kChunks; i += fa3::kTransposeThreads) {
    const int row = i / kChunks, chunk = i % kChunks, key = key0 + row;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (key < p.seqlen_k) value = *reinterpret_cast<const uint4*>(v + key * p.v_row_stride + chunk * 16);
    *reinterpret_cast<uint4*>(tile + row * kPitch + chunk * 16) = value;
  }
  __syncthreads();
  const long long keys_padded = fa3::transposed_keys(p.seqlen_k);
  unsigned char* vt = static_cast<unsigned char*>(p.v_transposed) +
                      ((static_cast<long long>(batch) * p.heads_kv + kv_head) * kHeadDim) * keys_padded +
                      key0;
  constexpr int kWordsPerRow = kKeys / 4;
#pragma unroll
  for (int i = threadIdx.x; i < kHeadDim * kWordsPerRow; i += fa3::kTransposeThreads) {
    const int column = i / kWordsPerRow, word = i % kWordsPerRow;
    unsigned packed = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int key = fa3::permuted_key(4 * word + b);  // within the CTA's 64 keys (32-key groups)
      packed |= unsigned(tile[key * kPitch + column]) << (8 * b);
    }
    *reinterpret_cast<unsigned*>(vt + column * keys_padded + 4 * word) = packed;
  }
}
