#pragma once
// Attention written as its textbook formulas, templated on the number type, for small problems only:
//   S = scale * Q K^T (masked), P = softmax(S), O = P V, LSE = log sum exp S,
//   dV = P^T dO, dP = dO V^T, D = rowsum(P * dP), dS = P * (dP - D), dQ = scale dS K, dK = scale dS^T Q.
// Instantiated with a 50-digit Boost.Multiprecision type it checks the float64 reference's own error;
// instantiated with double it is an independent second implementation for the tests (no compensated
// sums, no row-wise organisation, no sampling). Fully masked rows: O = 0, dQ = 0, LSE = -inf.
#include <cstddef>
#include <limits>
#include <vector>

#include "numerics/attention_tensors.hpp"

namespace fl::numerics {

template <class T>
struct NaiveOutputs {
  std::vector<T> o, lse, dq, dk, dv;
};

template <class T>
NaiveOutputs<T> naive_attention(AttentionInputs const& in) {
  using std::exp;
  using std::log;
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  std::size_t const nq = std::size_t(s.seqlen_q);
  std::size_t const nk = std::size_t(s.seqlen_k);
  T const scale = T(s.scale());
  bool const backward = in.has_backward();
  NaiveOutputs<T> out;
  out.o.assign(s.q_elements(), T(0));
  out.lse.assign(s.lse_elements(), T(0));
  if (backward) {
    out.dq.assign(s.q_elements(), T(0));
    out.dk.assign(s.kv_elements(), T(0));
    out.dv.assign(s.kv_elements(), T(0));
  }
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads_q; ++h) {
      std::size_t const q0 = (std::size_t(b) * s.heads_q + std::size_t(h)) * nq;
      std::size_t const k0 = (std::size_t(b) * s.heads_kv + std::size_t(s.kv_head_of(h))) * nk;
      std::vector<T> p(nq * nk, T(0));  // (N_q, N_k), zero where masked
      for (std::size_t i = 0; i < nq; ++i) {
        bool any = false;
        T row_max = T(0);
        std::vector<T> sc(nk, T(0));
        for (std::size_t j = 0; j < nk; ++j) {
          if (!s.key_visible(int(i), int(j))) continue;
          T acc = T(0);
          for (std::size_t e = 0; e < d; ++e) acc += T(in.q[(q0 + i) * d + e]) * T(in.k[(k0 + j) * d + e]);
          sc[j] = scale * acc;
          if (!any || sc[j] > row_max) row_max = sc[j];
          any = true;
        }
        if (!any) {
          out.lse[q0 + i] = T(-std::numeric_limits<double>::infinity());
          continue;
        }
        T l = T(0);
        for (std::size_t j = 0; j < nk; ++j)
          if (s.key_visible(int(i), int(j))) l += exp(sc[j] - row_max);
        out.lse[q0 + i] = row_max + log(l);
        for (std::size_t j = 0; j < nk; ++j)
          if (s.key_visible(int(i), int(j))) p[i * nk + j] = exp(sc[j] - row_max) / l;
        for (std::size_t j = 0; j < nk; ++j)
          for (std::size_t e = 0; e < d; ++e)
            out.o[(q0 + i) * d + e] += p[i * nk + j] * T(in.v[(k0 + j) * d + e]);
      }
      if (!backward) continue;
      for (std::size_t i = 0; i < nq; ++i) {
        std::vector<T> dp(nk, T(0));
        T delta = T(0);
        for (std::size_t j = 0; j < nk; ++j) {
          for (std::size_t e = 0; e < d; ++e)
            dp[j] += T(in.d_o[(q0 + i) * d + e]) * T(in.v[(k0 + j) * d + e]);
          delta += p[i * nk + j] * dp[j];
        }
        for (std::size_t j = 0; j < nk; ++j) {
          T const ds = p[i * nk + j] * (dp[j] - delta);
          for (std::size_t e = 0; e < d; ++e) {
            out.dq[(q0 + i) * d + e] += scale * ds * T(in.k[(k0 + j) * d + e]);
            out.dk[(k0 + j) * d + e] += scale * ds * T(in.q[(q0 + i) * d + e]);
            out.dv[(k0 + j) * d + e] += p[i * nk + j] * T(in.d_o[(q0 + i) * d + e]);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace fl::numerics
