#pragma once
// Host-side inputs and outputs of one attention problem as our kernels take and give them: float values
// exactly representable in the problem's storage precision (so that the float64 reference sees the same
// numbers as the GPU), and their 16-bit encodings. numerics/gpu/kernel_tensors.hpp converts them to and from
// numerics' float64 tensors; numerics/gpu/kernel_inputs.hpp makes seeded ones.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/precision.hpp"

namespace fl::device {

struct EncodedInputs;

struct HostInputs {
  std::vector<float> q;    // (B, H_q, N_q, D)
  std::vector<float> k;    // (B, H_kv, N_k, D)
  std::vector<float> v;    // (B, H_kv, N_k, D)
  std::vector<float> d_o;  // (B, H_q, N_q, D); empty for a forward problem
  // When set, exactly encode_inputs(*this, its dtype): uploads use it instead of converting again. Set only
  // on inputs that are not changed afterwards (the reference cache's), shared by the copies of those.
  std::shared_ptr<EncodedInputs const> encoded;
  // The storage precision the values above are for (bf16 for an FP8 problem's inputs; numerics' seeded and
  // family inputs are exact in it), set by whoever made them (numerics/gpu/kernel_inputs, kernel_tensors):
  // DeviceProblem::create refuses inputs made for another precision than its problem stores, which it would
  // round on upload and so run on other numbers than the reference judges. Unset only for hand-made inputs,
  // which are taken as they are.
  std::optional<common::Precision> dtype;
};

// The 16-bit encodings of a problem's inputs, made once per input set: converting Q, K, V of the H200 tuning
// shape takes 0.44 s on one core here, and every candidate uploads them to three input sets (verification
// and two rotated timing sets): 1.32 s of each candidate's host time before (experiments/tuner/README.md,
// "Notes").
struct EncodedInputs {
  common::Precision dtype;  // the storage precision encoded (bf16 for FP8 dtypes)
  std::vector<std::uint16_t> q, k, v, d_o;
};
EncodedInputs encode_inputs(HostInputs const& inputs, common::Precision dtype);

struct HostOutputs {
  std::vector<float> o;    // (B, H_q, N_q, D)
  std::vector<float> lse;  // (B, H_q, N_q)
  std::vector<float> dq;   // (B, H_q, N_q, D); backward only
  std::vector<float> dk;   // (B, H_kv, N_k, D)
  std::vector<float> dv;   // (B, H_kv, N_k, D)
};

// float -> the dtype's 2-byte encoding, and back (CUDA's own host conversions, round to nearest even). FP8
// dtypes use bf16, the element type of their outputs.
std::vector<std::uint16_t> encode_16bit(std::vector<float> const& values, common::Precision dtype);
std::vector<float> decode_16bit(std::vector<std::uint16_t> const& bits, common::Precision dtype);

}  // namespace fl::device
