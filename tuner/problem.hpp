#pragma once
// One attention problem as the tuner and the benchmark see it: the shape (numerics' AttentionShape,
// layout (B, H, N, D), bottom-right causal), the element type and the direction.
#include <string>

#include "numerics/attention_shape.hpp"
#include "numerics/precision.hpp"

namespace fl::tuner {

enum class Direction { forward, backward };

struct Problem {
  numerics::AttentionShape shape;
  numerics::Precision dtype = numerics::Precision::bf16;
  Direction direction = Direction::forward;
};

// FLOPs by the FlashAttention papers' convention: forward 4 * b * h * n_q * n_k * d, halved for causal
// (only when n_q == n_k is that exact; we keep the convention for every shape, as the papers do);
// backward 2.5 times the forward.
double attention_flops(Problem const& problem);

// The papers' headline shape for sequence length n and head dim d: b = 16384 / n, h = 2048 / d.
Problem headline_problem(int seqlen, int head_dim, bool causal, numerics::Precision dtype,
                         Direction direction);

// "b4 h16/16 n4096x4096 d128 bf16 causal fwd": one line for tables and logs.
std::string describe(Problem const& problem);

std::string direction_name(Direction direction);

}  // namespace fl::tuner
