// Smoke kernels: the smallest family that exercises the whole JIT path (compile-time constants from -D
// defines, template kernels reached through NVRTC name expressions, dynamic shared memory above the 48 KiB
// default) until the real attention families land. Device code only: NVRTC compiles this file as it is.

// Threads per block. The tuner passes the config's tunables the same way: -DFA_BLOCK_SIZE=256.
#ifndef FA_BLOCK_SIZE
#define FA_BLOCK_SIZE 128
#endif

namespace fl::smoke {

constexpr int kBlockSize = FA_BLOCK_SIZE;
static_assert(kBlockSize % 32 == 0 && kBlockSize <= 1024,
              "FA_BLOCK_SIZE must be a multiple of the warp size, <= 1024");

// out[i] = alpha * x[i] + y[i] for i < n; kItemsPerThread consecutive elements per thread.
// Instantiated by name expression, e.g. "fl::smoke::vector_axpy<2>".
template <int kItemsPerThread>
__global__ void __launch_bounds__(kBlockSize)
    vector_axpy(float alpha, float const* x, float const* y, float* out, int n) {
  int const first = (blockIdx.x * kBlockSize + threadIdx.x) * kItemsPerThread;
#pragma unroll
  for (int k = 0; k < kItemsPerThread; ++k) {
    int const i = first + k;
    if (i < n) out[i] = alpha * x[i] + y[i];
  }
}

// Reverses each block's chunk of `chunk` elements through dynamic shared memory (chunk * 4 bytes of it),
// so a launch with more than 48 KiB proves that the opt-in took effect. n must be a multiple of chunk.
__global__ void __launch_bounds__(kBlockSize) chunk_reverse(float const* in, float* out, int chunk) {
  extern __shared__ float staged[];
  float const* src = in + static_cast<long long>(blockIdx.x) * chunk;
  float* dst = out + static_cast<long long>(blockIdx.x) * chunk;
  for (int i = threadIdx.x; i < chunk; i += kBlockSize) staged[i] = src[i];
  __syncthreads();
  for (int i = threadIdx.x; i < chunk; i += kBlockSize) dst[i] = staged[chunk - 1 - i];
}

}  // namespace fl::smoke
