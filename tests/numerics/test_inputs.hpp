#pragma once
// Small helpers shared by the numerics tests: random inputs of a given shape.
#include <cstdint>

#include "numerics/attention_tensors.hpp"
#include "numerics/seeded_random.hpp"

namespace fl::numerics::test {

inline AttentionInputs random_inputs(common::AttentionShape const& shape, std::uint64_t seed,
                                     bool backward = true) {
  SeededRandom rng(seed);
  AttentionInputs in;
  in.shape = shape;
  auto fill = [&](std::vector<double>& t, std::size_t n) {
    t.resize(n);
    for (double& x : t) x = rng.normal();
  };
  fill(in.q, shape.q_elements());
  fill(in.k, shape.kv_elements());
  fill(in.v, shape.kv_elements());
  if (backward) fill(in.d_o, shape.q_elements());
  return in;
}

inline common::AttentionShape make_shape(int batch, int heads_q, int heads_kv, int n_q, int n_k, int d,
                                         bool causal) {
  common::AttentionShape s;
  s.batch = batch;
  s.heads_q = heads_q;
  s.heads_kv = heads_kv;
  s.seqlen_q = n_q;
  s.seqlen_k = n_k;
  s.head_dim = d;
  s.causal = causal;
  return s;
}

}  // namespace fl::numerics::test
