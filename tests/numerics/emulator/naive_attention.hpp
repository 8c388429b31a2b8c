#pragma once
// A deliberately plain attention in double precision, written separately from the emulator so that the
// emulator's tests do not check it against itself. Causal bottom-right aligned, GQA.
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "common/attention_shape.hpp"

namespace fl::test {

struct NaiveForward {
  std::vector<double> o, lse;
};
struct NaiveBackward {
  std::vector<double> dq, dk, dv;
};

inline std::vector<double> naive_probabilities(common::AttentionShape const& s, std::vector<float> const& q,
                                               std::vector<float> const& k, std::size_t b, int h, int i,
                                               double* lse_out) {
  auto const d = static_cast<std::size_t>(s.head_dim);
  std::size_t const bh = b * static_cast<std::size_t>(s.heads_q) + static_cast<std::size_t>(h);
  std::size_t const bhk =
      b * static_cast<std::size_t>(s.heads_kv) + static_cast<std::size_t>(s.kv_head_of(h));
  std::vector<double> sc(static_cast<std::size_t>(s.seqlen_k), -std::numeric_limits<double>::infinity());
  double mx = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < s.seqlen_k; ++j) {
    if (!s.key_visible(i, j)) continue;
    double dot = 0;
    for (std::size_t e = 0; e < d; ++e)
      dot += double(q[(bh * s.seqlen_q + i) * d + e]) * double(k[(bhk * s.seqlen_k + j) * d + e]);
    sc[j] = dot * s.scale();
    mx = std::max(mx, sc[j]);
  }
  double sum = 0;
  for (double& x : sc) {
    x = std::isinf(x) ? 0.0 : std::exp(x - mx);
    sum += x;
  }
  if (sum == 0) {
    *lse_out = -std::numeric_limits<double>::infinity();
    return sc;
  }
  for (double& x : sc) x /= sum;
  *lse_out = mx + std::log(sum);
  return sc;
}

inline NaiveForward naive_forward(common::AttentionShape const& s, std::vector<float> const& q,
                                  std::vector<float> const& k, std::vector<float> const& v) {
  auto const d = static_cast<std::size_t>(s.head_dim);
  NaiveForward out{std::vector<double>(s.q_elements(), 0.0), std::vector<double>(s.lse_elements(), 0.0)};
  for (std::size_t b = 0; b < std::size_t(s.batch); ++b)
    for (int h = 0; h < s.heads_q; ++h) {
      std::size_t const bh = b * s.heads_q + h;
      std::size_t const bhk = b * s.heads_kv + s.kv_head_of(h);
      for (int i = 0; i < s.seqlen_q; ++i) {
        auto const p = naive_probabilities(s, q, k, b, h, i, &out.lse[bh * s.seqlen_q + i]);
        for (int j = 0; j < s.seqlen_k; ++j)
          for (std::size_t e = 0; e < d; ++e)
            out.o[(bh * s.seqlen_q + i) * d + e] += p[j] * v[(bhk * s.seqlen_k + j) * d + e];
      }
    }
  return out;
}

inline NaiveBackward naive_backward(common::AttentionShape const& s, std::vector<float> const& q,
                                    std::vector<float> const& k, std::vector<float> const& v,
                                    std::vector<float> const& d_o) {
  auto const d = static_cast<std::size_t>(s.head_dim);
  NaiveBackward g{std::vector<double>(s.q_elements(), 0.0), std::vector<double>(s.kv_elements(), 0.0),
                  std::vector<double>(s.kv_elements(), 0.0)};
  for (std::size_t b = 0; b < std::size_t(s.batch); ++b)
    for (int h = 0; h < s.heads_q; ++h) {
      std::size_t const bh = b * s.heads_q + h;
      std::size_t const bhk = b * s.heads_kv + s.kv_head_of(h);
      for (int i = 0; i < s.seqlen_q; ++i) {
        double lse = 0;
        auto const p = naive_probabilities(s, q, k, b, h, i, &lse);
        std::vector<double> dp(s.seqlen_k, 0.0);
        double delta = 0;
        for (int j = 0; j < s.seqlen_k; ++j) {
          for (std::size_t e = 0; e < d; ++e)
            dp[j] += double(d_o[(bh * s.seqlen_q + i) * d + e]) * v[(bhk * s.seqlen_k + j) * d + e];
          delta += p[j] * dp[j];
        }
        for (int j = 0; j < s.seqlen_k; ++j) {
          double const ds = p[j] * (dp[j] - delta);
          for (std::size_t e = 0; e < d; ++e) {
            g.dv[(bhk * s.seqlen_k + j) * d + e] += p[j] * d_o[(bh * s.seqlen_q + i) * d + e];
            g.dk[(bhk * s.seqlen_k + j) * d + e] += s.scale() * ds * q[(bh * s.seqlen_q + i) * d + e];
            g.dq[(bh * s.seqlen_q + i) * d + e] += s.scale() * ds * k[(bhk * s.seqlen_k + j) * d + e];
          }
        }
      }
    }
  return g;
}

inline std::vector<float> normal_values(std::size_t n, unsigned seed, float sigma = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> out(n);
  for (float& x : out) x = dist(gen);
  return out;
}

}  // namespace fl::test
