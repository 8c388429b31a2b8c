// Stand-alone probe of the fa2_sm80 forward kernel, built with nvcc (not NVRTC) so that the kernel could
// be checked and timed on the H200 before the JIT runtime existed. Same kernel source as the JIT path:
// it includes kernels_src/fa2_sm80_fwd.cu directly. Verifies sampled rows against a float64 CPU reference
// and times by the project protocol (events, warm-up, median of 30, p20/p80, inputs rotated past the L2).
//
// Build: nvcc -std=c++20 -O2 -gencode=arch=compute_90a,code=sm_90a -I kernels_src fa2_probe.cu -o fa2_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "fa2_sm80_fwd.cu"

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e = (x);                                                             \
    if (e != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(3);                                                                  \
    }                                                                                \
  } while (0)

using bf16 = __nv_bfloat16;

struct Problem {
  int b, hq, hkv, nq, nk, d;
  bool causal;
};

struct Buffers {
  bf16 *q, *k, *v, *o;
  float* lse;
};

static float bf(float x) {
  return __bfloat162float(__float2bfloat16(x));
}

template <int D, int BM, int BN, int NW, int ST, int WN, bool QR, bool ES, bool C>
struct Kernel {
  static constexpr int kD = D;
  using Cfg = fa2::FwdConfig<D, BM, BN, NW, ST, WN, QR, ES>;
  static std::string name() {
    char buf[128];
    std::snprintf(buf, sizeof buf, "d%d M%d N%d w%d s%d wn%d qr%d es%d %s", D, BM, BN, NW, ST, WN, QR, ES,
                  C ? "causal" : "full");
    return buf;
  }
  static void launch(const fa::AttentionParams& p, cudaStream_t st) {
    auto k = fa2_sm80_fwd<bf16, D, BM, BN, NW, ST, WN, QR, ES, C>;
    static bool init = false;
    if (!init) {
      CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
      init = true;
    }
    dim3 grid((p.seqlen_q + BM - 1) / BM, p.heads_q, p.batch);
    k<<<grid, Cfg::kThreads, Cfg::kSmemBytes, st>>>(p);
  }
  static constexpr bool kCausal = C;
};

static fa::AttentionParams make_params(const Problem& pr, const Buffers& b) {
  fa::AttentionParams p{};
  p.q = b.q;
  p.k = b.k;
  p.v = b.v;
  p.o = b.o;
  p.lse = b.lse;
  long long d = pr.d;
  p.q_row_stride = d;
  p.q_head_stride = d * pr.nq;
  p.q_batch_stride = d * pr.nq * pr.hq;
  p.k_row_stride = d;
  p.k_head_stride = d * pr.nk;
  p.k_batch_stride = d * pr.nk * pr.hkv;
  p.v_row_stride = d;
  p.v_head_stride = d * pr.nk;
  p.v_batch_stride = d * pr.nk * pr.hkv;
  p.o_row_stride = d;
  p.o_head_stride = d * pr.nq;
  p.o_batch_stride = d * pr.nq * pr.hq;
  p.batch = pr.b;
  p.heads_q = pr.hq;
  p.heads_kv = pr.hkv;
  p.seqlen_q = pr.nq;
  p.seqlen_k = pr.nk;
  p.head_dim = pr.d;
  p.softmax_scale = float(1.0 / std::sqrt(double(pr.d)));
  p.softmax_scale_log2 = p.softmax_scale * 1.4426950408889634f;
  return p;
}

// Verifies sampled rows (first, last, random) of every (batch, head) pair sampled. Returns max normwise
// error.
template <typename K>
static bool verify(const Problem& pr) {
  size_t nq_el = size_t(pr.b) * pr.hq * pr.nq * pr.d, nk_el = size_t(pr.b) * pr.hkv * pr.nk * pr.d;
  std::mt19937 rng(1234 + pr.nq * 7 + pr.nk);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<bf16> hq(nq_el), hk(nk_el), hv(nk_el);
  std::vector<float> fq(nq_el), fk(nk_el), fv(nk_el);
  // Scores with a spread (x2) so that the running max moves between blocks.
  for (size_t i = 0; i < nq_el; ++i) {
    fq[i] = bf(2.f * nd(rng));
    hq[i] = __float2bfloat16(fq[i]);
  }
  for (size_t i = 0; i < nk_el; ++i) {
    fk[i] = bf(nd(rng));
    hk[i] = __float2bfloat16(fk[i]);
  }
  for (size_t i = 0; i < nk_el; ++i) {
    fv[i] = bf(nd(rng));
    hv[i] = __float2bfloat16(fv[i]);
  }
  Buffers b;
  CK(cudaMalloc(&b.q, nq_el * 2));
  CK(cudaMalloc(&b.k, nk_el * 2));
  CK(cudaMalloc(&b.v, nk_el * 2));
  CK(cudaMalloc(&b.o, nq_el * 2));
  CK(cudaMalloc(&b.lse, size_t(pr.b) * pr.hq * pr.nq * 4));
  CK(cudaMemcpy(b.q, hq.data(), nq_el * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.k, hk.data(), nk_el * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.v, hv.data(), nk_el * 2, cudaMemcpyHostToDevice));
  CK(cudaMemset(b.o, 0xff, nq_el * 2));  // poison: NaN bf16
  CK(cudaMemset(b.lse, 0xff, size_t(pr.b) * pr.hq * pr.nq * 4));
  auto p = make_params(pr, b);
  K::launch(p, 0);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<bf16> ho(nq_el);
  std::vector<float> hl(size_t(pr.b) * pr.hq * pr.nq);
  CK(cudaMemcpy(ho.data(), b.o, nq_el * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hl.data(), b.lse, hl.size() * 4, cudaMemcpyDeviceToHost));
  double worst = 0, worst_lse = 0;
  int bad_nan = 0;
  std::vector<int> rows = {0, 1, pr.nq - 1, pr.nq / 2, pr.nq - 2};
  for (int i = 0; i < 6; ++i) rows.push_back(int(rng() % pr.nq));
  const double scale = 1.0 / std::sqrt(double(pr.d));
  for (int bb = 0; bb < pr.b; bb += std::max(1, pr.b - 1))
    for (int h = 0; h < pr.hq; h += std::max(1, pr.hq / 3)) {
      int hk_ = h / (pr.hq / pr.hkv);
      for (int r : rows) {
        if (r < 0 || r >= pr.nq) continue;
        const float* qr = &fq[((size_t(bb) * pr.hq + h) * pr.nq + r) * pr.d];
        std::vector<double> s(pr.nk);
        double m = -INFINITY;
        for (int j = 0; j < pr.nk; ++j) {
          bool vis = !pr.causal || j <= r + (pr.nk - pr.nq);
          if (!vis) {
            s[j] = -INFINITY;
            continue;
          }
          const float* kr = &fk[((size_t(bb) * pr.hkv + hk_) * pr.nk + j) * pr.d];
          double acc = 0;
          for (int e = 0; e < pr.d; ++e) acc += double(qr[e]) * kr[e];
          s[j] = acc * scale;
          m = std::max(m, s[j]);
        }
        double l = 0;
        std::vector<double> o(pr.d, 0.0);
        if (m != -INFINITY)
          for (int j = 0; j < pr.nk; ++j) {
            if (s[j] == -INFINITY) continue;
            double pj = std::exp(s[j] - m);
            l += pj;
            const float* vr = &fv[((size_t(bb) * pr.hkv + hk_) * pr.nk + j) * pr.d];
            for (int e = 0; e < pr.d; ++e) o[e] += pj * vr[e];
          }
        double num = 0, den = 0;
        for (int e = 0; e < pr.d; ++e) {
          double ref = l > 0 ? o[e] / l : 0.0;
          double got = __bfloat162float(ho[((size_t(bb) * pr.hq + h) * pr.nq + r) * pr.d + e]);
          if (std::isnan(got)) ++bad_nan;
          num += (got - ref) * (got - ref);
          den += ref * ref;
        }
        double err = std::sqrt(num / std::max(den, 1e-30));
        if (l == 0) err = std::sqrt(num);
        worst = std::max(worst, err);
        double lse_ref = l > 0 ? m + std::log(l) : -INFINITY;
        double lse_got = hl[(size_t(bb) * pr.hq + h) * pr.nq + r];
        double lerr = (l > 0) ? std::fabs(lse_got - lse_ref) : (lse_got == -INFINITY ? 0 : 1e9);
        if (std::isnan(lse_got)) lerr = 1e9;
        worst_lse = std::max(worst_lse, lerr);
      }
    }
  bool ok = worst < 1.5e-2 && worst_lse < 1e-2 && bad_nan == 0;
  std::printf("  check %-44s b%d hq%d hkv%d nq%d nk%d: O rel %.2e LSE abs %.2e nan %d %s\n",
              K::name().c_str(), pr.b, pr.hq, pr.hkv, pr.nq, pr.nk, worst, worst_lse, bad_nan,
              ok ? "PASS" : "FAIL");
  cudaFree(b.q);
  cudaFree(b.k);
  cudaFree(b.v);
  cudaFree(b.o);
  cudaFree(b.lse);
  return ok;
}

template <typename K>
static double bench(int n) {
  Problem pr{16384 / n, 2048 / K::kD, 2048 / K::kD, n, n, K::kD, K::kCausal};
  size_t el = size_t(pr.b) * pr.hq * n * pr.d;
  constexpr int kSets = 3;  // 3 x (Q,K,V,O) of 64 MiB each: far past the 60 MB L2
  Buffers sets[kSets];
  std::vector<bf16> h(el);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto& x : h) x = __float2bfloat16(nd(rng));
  for (auto& b : sets) {
    CK(cudaMalloc(&b.q, el * 2));
    CK(cudaMalloc(&b.k, el * 2));
    CK(cudaMalloc(&b.v, el * 2));
    CK(cudaMalloc(&b.o, el * 2));
    CK(cudaMalloc(&b.lse, size_t(pr.b) * pr.hq * n * 4));
    CK(cudaMemcpy(b.q, h.data(), el * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.k, h.data(), el * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.v, h.data(), el * 2, cudaMemcpyHostToDevice));
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 5; ++i) K::launch(make_params(pr, sets[i % kSets]), 0);
  std::vector<float> ms;
  for (int i = 0; i < 30; ++i) {
    auto p = make_params(pr, sets[i % kSets]);
    CK(cudaEventRecord(e0));
    K::launch(p, 0);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t;
    CK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  double med = ms[ms.size() / 2];
  double flops = 4.0 * pr.b * pr.hq * double(n) * n * pr.d / (K::kCausal ? 2 : 1);
  double tf = flops / (med * 1e-3) / 1e12;
  std::printf("  bench %-44s n%-6d %8.3f ms  p20 %.3f p80 %.3f  %6.1f TFLOP/s\n", K::name().c_str(), n, med,
              ms[6], ms[24], tf);
  for (auto& b : sets) {
    cudaFree(b.q);
    cudaFree(b.k);
    cudaFree(b.v);
    cudaFree(b.o);
    cudaFree(b.lse);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return tf;
}

template <typename K>
static void run_all(bool checks, const std::vector<int>& ns) {
  if (checks) {
    verify<K>({2, 4, 4, 1000, 1000, K::kD, K::kCausal});
    verify<K>({1, 8, 2, 257, 513, K::kD, K::kCausal});  // GQA, n_q != n_k, tails
    verify<K>({1, 2, 1, 513, 130, K::kD, K::kCausal});  // n_q > n_k: fully masked rows when causal
    verify<K>({1, 2, 2, 77, 77, K::kD, K::kCausal});
  }
  for (int n : ns) bench<K>(n);
}
