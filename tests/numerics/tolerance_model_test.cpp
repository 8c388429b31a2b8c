// The LSE bound against the arithmetic a tensor-core kernel really does: flash_decode's split-KV forward
// (kernels_src/flash_decode_fwd.cu) emulated step for step on the case that failed on the H200 (the [gpu]
// test "flash_decode default configs are correct at decode shapes", d256: LSE 1.16x its bound in bf16 on
// 8 of 8 rows, 1.06x in fp16 on 1 row; all_negative, b1 h8/2, n_q 1, n_k 4097, seed 1; kBlockN 16,
// kNWarps 2, kSplits 32). Emulated with the tensor cores' rounding of Q.K (16 products per step, aligned
// with 2 bits past fp32's 24, truncated, normalised toward zero) it gives 1.159x (8 rows) and 1.062x
// (1 row) against the bound without its coherent dot-product term: the H200's figures. With dot products
// rounded to nearest, the same split, merge and LSE formula stay at 0.09x: the kernel adds nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "numerics/check.hpp"
#include "numerics/input_families.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"

using namespace fl::numerics;

namespace {

using Dot = std::function<float(double const*, double const*, int)>;

// fp32 toward zero.
float round_toward_zero(double x) {
  float f = static_cast<float>(x);
  if (std::fabs(double(f)) > std::fabs(x)) f = std::nextafter(f, 0.f);
  return f;
}

// One mma.sync m16n8k16 chain over d: per step the accumulator and 16 exact products (16-bit x 16-bit fits
// a double) aligned to the largest exponent, truncated 2 bits past fp32's 24, summed, normalised toward zero.
float tensor_core_dot(double const* q, double const* k, int d) {
  constexpr int kStep = 16, kAlignmentBits = 23 + 2;
  float acc = 0.f;
  for (int i0 = 0; i0 < d; i0 += kStep) {
    std::vector<double> terms{acc};
    for (int i = i0; i < i0 + kStep; ++i) terms.push_back(q[i] * k[i]);
    int top = std::numeric_limits<int>::min();
    for (double t : terms)
      if (t != 0.0) top = std::max(top, std::ilogb(t));
    if (top == std::numeric_limits<int>::min()) continue;
    double const quantum = std::ldexp(1.0, top - kAlignmentBits);
    double sum = 0.0;  // exact: at most 17 terms of 27 bits on one grid
    for (double t : terms) sum += std::trunc(t / quantum) * quantum;
    acc = round_toward_zero(sum);
  }
  return acc;
}

float round_to_nearest_dot(double const* q, double const* k, int d) {
  long double sum = 0.0L;
  for (int i = 0; i < d; ++i) sum += static_cast<long double>(q[i]) * k[i];
  return static_cast<float>(sum);
}

float exp2_f32(float x) {
  return static_cast<float>(std::exp2(double(x)));
}

// flash_decode's LSE of every row (n_q = 1 here): each of kSplits x kNWarps partials walks its contiguous
// key blocks with the online softmax of fa_softmax.cuh (M = m * scale_log2 rounded, p = 2^fma(s, scale_log2,
// -M), per-lane sums over the lane's 4 columns of a 16-key block, rescaled by 2^(M_old - M_new)), quad-sums
// l; the combine kernel merges with part_weight and writes fa::row_lse.
std::vector<double> flash_decode_lse(AttentionInputs const& in, Dot const& dot) {
  constexpr int kBlockN = 16, kPartials = 32 * 2;  // kSplits x kNWarps
  constexpr float kLn2 = 0.6931471805599453f;
  AttentionShape const& s = in.shape;
  int const d = s.head_dim, nk = s.seqlen_k, group = s.heads_q / s.heads_kv;
  float const scale_log2 = static_cast<float>(s.scale() * 1.4426950408889634);  // as tuner/run does
  int const key_blocks = (nk + kBlockN - 1) / kBlockN;
  int const per_partial = (key_blocks + kPartials - 1) / kPartials;
  std::vector<double> lse(std::size_t(s.heads_q));
  for (int row = 0; row < s.heads_q; ++row) {
    double const* q = in.q.data() + std::size_t(row) * d;
    double const* k = in.k.data() + std::size_t(row / group) * nk * d;
    std::vector<float> part_m(kPartials), part_l(kPartials);
    for (int part = 0; part < kPartials; ++part) {
      int const first = part * per_partial,
                count = std::max(0, std::min(key_blocks, first + per_partial) - first);
      float row_max = -INFINITY, lane_sum[4] = {0.f, 0.f, 0.f, 0.f};
      for (int nb = first; nb < first + count; ++nb) {
        float score[kBlockN];
        float block_max = row_max;
        for (int c = 0; c < kBlockN; ++c) {
          int const key = nb * kBlockN + c;
          score[c] = key < nk ? dot(q, k + std::size_t(key) * d, d) : -INFINITY;
          block_max = std::fmax(block_max, score[c]);
        }
        float const max_log2 = block_max == -INFINITY ? 0.f : block_max * scale_log2;
        float const rescale = exp2_f32(row_max * scale_log2 - max_log2);
        for (int lane = 0; lane < 4; ++lane) {
          float sum = 0.f;
          for (int col : {2 * lane, 2 * lane + 1, 8 + 2 * lane, 9 + 2 * lane})
            sum += exp2_f32(std::fma(score[col], scale_log2, -max_log2));
          lane_sum[lane] = std::fma(lane_sum[lane], rescale, sum);
        }
        row_max = block_max;
      }
      part_m[std::size_t(part)] = row_max;
      part_l[std::size_t(part)] = (lane_sum[0] + lane_sum[1]) + (lane_sum[2] + lane_sum[3]);
    }
    float const m_all = *std::max_element(part_m.begin(), part_m.end());
    float const m_all_log2 = m_all == -INFINITY ? 0.f : m_all * scale_log2;
    float l = 0.f;
    for (int part = 0; part < kPartials; ++part)
      l = std::fma(part_l[std::size_t(part)], exp2_f32(part_m[std::size_t(part)] * scale_log2 - m_all_log2),
                   l);
    lse[std::size_t(row)] =
        std::fma(m_all * scale_log2, kLn2, static_cast<float>(std::log2(double(l))) * kLn2);
  }
  return lse;
}

struct LseVerdict {
  OutputJudgement lse;
  double worst_error = 0.0;
};

LseVerdict judge_flash_decode(Precision dtype, Dot const& dot) {
  FamilyRequest request;
  request.shape = {1, 8, 2, 1, 4097, 256, false, 0.0};
  request.seed = 1;
  request.precision = dtype;
  request.with_backward = false;
  AttentionInputs const in = generate_family(InputFamily::all_negative, request).inputs;
  AttentionOutputs const ref = reference_attention(in);
  AttentionOutputs observed;
  observed.o = ref.o;  // O passed on the H200 (0.33-0.38 of its bound); the question is the LSE
  for (double& x : observed.o) x = double(round_to(dtype, float(x)));
  observed.lse = flash_decode_lse(in, dot);
  CheckOptions options;
  options.claimed = dtype;
  LseVerdict v;
  for (auto const& j : run_check(in, observed, options).judgement.outputs)
    if (j.name == "LSE") v.lse = j;
  for (std::size_t r = 0; r < ref.lse.size(); ++r)
    v.worst_error = std::max(v.worst_error, std::fabs(observed.lse[r] - ref.lse[r]));
  return v;
}

}  // namespace

TEST_CASE("the LSE bound holds flash_decode's tensor-core arithmetic on all_negative rows at d256",
          "[numerics][tolerance]") {
  for (auto const dtype : {Precision::bf16, Precision::fp16}) {
    INFO(name(dtype));
    LseVerdict const tc = judge_flash_decode(dtype, tensor_core_dot);
    REQUIRE(tc.lse.checked);
    // The H200's error: about 1.1e-4 (1.06-1.16 x the old bound of ~1e-4): every score ~2e-3 (raw) toward 0.
    CHECK(tc.worst_error > 0.9e-4);
    CHECK(tc.worst_error < 1.3e-4);
    CHECK(tc.lse.failing_elements == 0);
    // The coherent term is sized to the error, not a blanket: 0.18 (bf16) and 0.16 (fp16) of the bound.
    CHECK(tc.lse.worst_ratio > 0.1);
  }
}

TEST_CASE("flash_decode's split merge and LSE formula add only the final rounding", "[numerics][tolerance]") {
  // Rounded-to-nearest scores: the merged max's rounding cancels (each partial's weight 2^(M_p - M_all) is
  // exact), and what remains is the last FFMA's half ulp at |LSE| ~ 247 (7.6e-6) and scale_log2's fp32
  // rounding (1.3e-8 relative: 3e-6 here); measured 8.8e-6.
  LseVerdict const rn = judge_flash_decode(Precision::bf16, round_to_nearest_dot);
  CHECK(rn.worst_error < 1.2e-5);
  CHECK(rn.lse.failing_elements == 0);
}
