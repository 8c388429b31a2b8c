#pragma once
// fp8_quantize.cuh with a pre-transposed V (Problem::fp8.pretransposed_v): V's codes written straight into
// fa3_sm90's V^T (fa3_sm90_v_transpose_map.h's vt_global_offset: (B, H_kv, D, N_k rounded up to 128),
// keys permuted within each 16 by permuted_key), the transpose fused into the quantisation, so the FP8
// forward's launch sequence has no transpose launch and no second pass over V. The padding positions are
// never written: the host zeroes them once when it allocates V (device/run/device_problem.cpp).
//
// V is never rotated, so a thread's 16 values need not share a row with the lanes beside it: a thread owns
// one key position of a layer and 16 columns, the lanes of a warp consecutive positions (d 64: 32 of them,
// d 128: 16, d 256: 8), so each of a thread's 16 one-byte stores writes, with its warp, 32, 2 x 16 or 4 x 8
// consecutive bytes of V^T rows (one 32-byte sector each, 16 B or 8 B of it for d 128 / 256) instead of a
// 16-byte store per row. The position's key is permuted_key(position): the map's own function, so the keys
// a layer loads are its positions' keys and no inverse is needed.
#include "fa3_sm90_v_transpose_map.h"
#include "fp8_quantize_sweeps.cuh"

namespace fp8q {

template <int kHeadDim>
struct TransposedSliceOwner {
  static constexpr int kTensor = 2;  // V: its blocks' blockIdx.y (of kTensors: Q, K, V)
  static constexpr int kPositionsPerLayer = rows_per_layer<kHeadDim>();
  // 16 keys: permuted_key's period. A descale block (a multiple of 64 rows for fa3_sm90, whose rules ask
  // kBlockN | block rows; kUniformDescaleBlockRows = 256) starts at a multiple of it, so its positions
  // permute its own keys only; its last 16 may reach past N_k (loaded as zeros, not stored).
  static constexpr int kPermutationPeriod = 16;
  int column;
  int position_in_layer;
  int layers;
  long long matrix;  // (batch, kv head) of the block
  int first_key;     // the block's first key in its matrix

  __device__ __forceinline__ TransposedSliceOwner(const TensorView& t, BlockRows rows)
      : column(int(threadIdx.x / kPositionsPerLayer) * kSliceElements),
        position_in_layer(int(threadIdx.x % kPositionsPerLayer)),
        layers(
            int(((rows.last - rows.first + kPermutationPeriod - 1) / kPermutationPeriod * kPermutationPeriod +
                 kPositionsPerLayer - 1) /
                kPositionsPerLayer)),
        matrix(rows.first / t.rows),
        first_key(int(rows.first - matrix * t.rows)) {}

  __device__ __forceinline__ int position(int layer) const {
    return layer * kPositionsPerLayer + position_in_layer;
  }
  __device__ __forceinline__ long long row(BlockRows rows, int layer) const {
    return rows.first + fa3::permuted_key(position(layer));
  }
  // Byte j of `codes` (column column + j) at its V^T row's position of this layer.
  __device__ __forceinline__ void store(const TensorView& t, int layer, long long, uint4 codes) const {
    const long long at = fa3::vt_global_offset(kHeadDim, t.rows, matrix, column, first_key + position(layer));
    const long long column_stride = fa3::vt_global_offset(kHeadDim, t.rows, 0, 1, 0);
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&codes);
#pragma unroll
    for (int j = 0; j < kSliceElements; ++j) t.codes[at + j * column_stride] = bytes[j];
  }
};

}  // namespace fp8q

// fp8_quantize with a pre-transposed V: Q's and K's blocks as there, V's codes written as fa3_sm90's V^T
// (TransposedSliceOwner above). A kernel of its own, in fa3_sm90's program only
// (fp8_quantize_fa3_sm90_fwd.cu): fp8_quantize and fa2_fp8's program keep their PTX (NVRTC emits
// fa3_sm90_config.h's constants into any program including it).
template <typename Element, int kHeadDim, bool kTensorScale>
__global__ void __launch_bounds__(fp8q::kThreads, fp8q::kCtasPerSm)
    fp8_quantize_transposed_v(const __grid_constant__ fa::AttentionParams p) {
  using TransposedV = fp8q::TransposedSliceOwner<kHeadDim>;
  const fp8q::TensorView t = fp8q::tensor_view(p, blockIdx.y);
  const int block = blockIdx.x;
  if (block >= t.blocks) return;
  const fp8q::BlockRows rows = fp8q::block_rows(t, block, p.descale_block_rows);
  const bool v = blockIdx.y == TransposedV::kTensor;
  if constexpr (kTensorScale) {
    if (v) return fp8q::write_codes<Element, kHeadDim, TransposedV>(t, rows, float(*t.scale), nullptr);
    fp8q::write_codes<Element, kHeadDim>(t, rows, float(*t.scale), nullptr);
  } else {
    __shared__ float4 kept_shared[fp8q::kSharedLayers * fp8q::kQuads * fp8q::kThreads];
    fp8q::KeptValues kept;
    kept.shared = kept_shared;
    if (v) return fp8q::quantize_block<Element, kHeadDim, TransposedV>(t, rows, block, kept);
    fp8q::quantize_block<Element, kHeadDim>(t, rows, block, kept);
  }
}
