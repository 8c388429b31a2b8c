#pragma once
// Standard (untiled) attention in float on device/'s host tensors, for the tests of numerics/gpu/ and of the
// tuner's prepared check: an implementation independent of the checkers' float64 references.
#include <cmath>
#include <limits>
#include <vector>

#include "device/run/host_tensors.hpp"
#include "numerics/precision.hpp"

namespace fl::test {

using device::HostInputs;
using device::HostOutputs;
using device::Problem;

// Standard attention in float (an implementation independent of the checker's double reference),
// rounded to the dtype like a kernel's output. round_scores: S * scale rounded to the dtype before the
// softmax, as naive with kScoreBits = 16 stores it.
inline device::HostOutputs standard_attention(Problem const& p, device::HostInputs const& in,
                                              bool round_scores = false) {
  auto const& s = p.shape;
  auto const d = std::size_t(s.head_dim);
  device::HostOutputs out;
  out.o.assign(s.q_elements(), 0.0f);
  out.lse.assign(s.lse_elements(), 0.0f);
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads_q; ++h)
      for (int i = 0; i < s.seqlen_q; ++i) {
        std::vector<float> w(std::size_t(s.seqlen_k), 0.0f);
        float m = -std::numeric_limits<float>::infinity();
        for (int j = 0; j < s.seqlen_k; ++j) {
          if (!s.key_visible(i, j)) continue;
          float acc = 0;
          for (std::size_t e = 0; e < d; ++e)
            acc += in.q[((std::size_t(b) * s.heads_q + h) * s.seqlen_q + i) * d + e] *
                   in.k[((std::size_t(b) * s.heads_kv + s.kv_head_of(h)) * s.seqlen_k + j) * d + e];
          w[j] = acc * float(s.scale());
          if (round_scores) w[j] = fl::numerics::round_to(p.dtype, w[j]);
          m = std::max(m, w[j]);
        }
        float l = 0;
        std::vector<float> o(d, 0.0f);
        for (int j = 0; j < s.seqlen_k && std::isfinite(m); ++j) {
          if (!s.key_visible(i, j)) continue;
          float const pj = std::exp(w[j] - m);
          l += pj;
          for (std::size_t e = 0; e < d; ++e)
            o[e] += pj * in.v[((std::size_t(b) * s.heads_kv + s.kv_head_of(h)) * s.seqlen_k + j) * d + e];
        }
        auto const row = (std::size_t(b) * s.heads_q + h) * s.seqlen_q + i;
        for (std::size_t e = 0; e < d; ++e)
          out.o[row * d + e] = fl::numerics::round_to(p.dtype, l > 0 ? o[e] / l : 0);
        out.lse[row] = l > 0 ? m + std::log(l) : -std::numeric_limits<float>::infinity();
      }
  return out;
}

}  // namespace fl::test
