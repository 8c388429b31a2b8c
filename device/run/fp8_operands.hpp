#pragma once
// What an FP8 problem's kernel is given besides its bf16 inputs: Q, K, V as one-byte codes with the
// descale factors fa::AttentionParams carries (quantised on the host), the scale of P before P·V, and the
// incoherent transform's signs. numerics computes them (numerics/gpu/kernel_fp8_operands.hpp: its
// quantisation, recipe and transform are the ones its emulations and tolerance model use); device/ uploads
// them (DeviceProblem::create) and never recomputes them.
#include <cstdint>
#include <vector>

#include "common/precision.hpp"

namespace fl::device {

struct Fp8Operands {
  // Quantised on the host; empty when the problem quantises on the device (quantizes_on_device).
  std::vector<std::uint8_t> q, k, v;  // codes, (B, H, N, D); v empty with bf16 P V (v_bf16)
  std::vector<std::uint16_t> v_bf16;  // Problem::fp8.bf16_pv: V's bf16 bits (its descales are 1)
  // One factor per tensor (size 1) or per block: (B, H, ceil(N / block_rows)).
  std::vector<float> q_descale, k_descale, v_descale;
  bool per_tensor = true;
  int block_rows = 0;  // rows per block (per_tensor: 0)
  // Always: the recipe's scale of P before P·V (FlashAttention-3's 2^8), and, with the incoherent transform
  // on, its random signs (D values) that the device quantisation rotates Q and K with.
  float p_scale = 1.0f;
  std::vector<float> rotation_signs;
};

// The FP8 encoding of a value exactly representable in `format` (CUDA's host conversion, saturating).
std::uint8_t fp8_code(float value, common::Precision format);

}  // namespace fl::device
