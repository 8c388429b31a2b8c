#pragma once
// Between numerics' float64 host tensors (AttentionInputs / AttentionOutputs, what the reference, the
// judge and the diagnosis read) and the tuner's float host tensors (what DeviceProblem uploads in the
// kernel's dtype). Layout is the same on both sides: contiguous (B, H, N, D), LSE (B, H, N).
#include "numerics/attention_tensors.hpp"
#include "tuner/run/host_tensors.hpp"

namespace fl::tuner {

// Q, K, V (dO is the backward's and is not carried). Numerics' input families hold values exactly
// representable in the claimed dtype, so double -> float -> dtype is exact for them; any other value is
// rounded to nearest twice (to float, then to the dtype on upload), as a caller handing doubles expects.
HostInputs to_host_inputs(numerics::AttentionInputs const& inputs);

// O and LSE as the kernel wrote them (every float is exact in a double).
numerics::AttentionOutputs to_attention_outputs(HostOutputs const& outputs);

}  // namespace fl::tuner
