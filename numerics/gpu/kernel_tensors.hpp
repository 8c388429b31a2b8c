#pragma once
// Between numerics' float64 tensors (AttentionInputs / AttentionOutputs: what the reference, the judge and
// the diagnosis read) and device/'s float host tensors (what DeviceProblem uploads in the kernel's dtype).
// Layout is the same on both sides: contiguous (B, H, N, D), LSE (B, H, N).
#include "device/problem.hpp"
#include "device/run/host_tensors.hpp"
#include "numerics/attention_tensors.hpp"

namespace fl::numerics::gpu {

// Q, K, V and dO (empty for a forward problem) under the problem's shape; every float is exact in a double.
AttentionInputs to_attention_inputs(device::Problem const& problem, device::HostInputs const& inputs);

// O and LSE as the kernel wrote them, and dQ, dK, dV when it wrote them (every float is exact in a double).
AttentionOutputs to_attention_outputs(device::HostOutputs const& outputs);
// The same into `into`, reusing its storage: a caller judging many outputs of one shape (fa-tune's
// candidates) keeps one, so that the ~1 GB of doubles of a headline backward is not paged in afresh for each
// (0.6 s of a 0.8 s judge on the build machine, tests/tuner/tune/backward_verification_cost_test.cpp).
// threads: common::parallel_for's (0: every core).
void assign_attention_outputs(device::HostOutputs const& outputs, AttentionOutputs& into, int threads = 0);

// Q, K, V (dO is the backward's and is not carried). Numerics' input families hold values exactly
// representable in the claimed dtype, so double -> float -> dtype is exact for them; any other value is
// rounded to nearest twice (to float, then to the dtype on upload), as a caller handing doubles expects.
// Tagged with `dtype`'s storage precision (device::HostInputs::dtype).
device::HostInputs to_host_inputs(AttentionInputs const& inputs, common::Precision dtype);

}  // namespace fl::numerics::gpu
