namespace ns {
template <int N>
__global__ void spill(const float* x, float* y, int n) {
  float acc[N];
  for (int i = 0; i < N; ++i) acc[i] = x[(threadIdx.x * 7 + i * 13) % n];
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < N; ++i) acc[(i * 5 + r) % N] += acc[(i * 3 + r + 1) % N] * x[i % n];
  float s = 0;
  for (int i = 0; i < N; ++i) s += acc[i] * acc[(i + 1) % N];
  y[threadIdx.x] = s;
}
__global__ void smem(float* y) {
  __shared__ float buf[2048];
  buf[threadIdx.x] = threadIdx.x;
  __syncthreads();
  y[threadIdx.x] = buf[2047 - threadIdx.x];
}
}  // namespace ns
extern "C" __global__ void plain(float* y) {
  y[threadIdx.x] = 1.0f;
}
__constant__ float table[100];
__global__ void usesconst(float* y) {
  y[threadIdx.x] = table[threadIdx.x % 100];
}
__device__ __noinline__ float helper(const float* x, int i) {
  float t[8];
  for (int j = 0; j < 8; ++j) t[j] = x[i + j];
  return t[i & 7];
}
__global__ void caller(const float* x, float* y) {
  y[threadIdx.x] = helper(x, threadIdx.x);
}
