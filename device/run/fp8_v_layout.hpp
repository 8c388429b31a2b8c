#pragma once
// FP8 V in the layout fa3_sm90's P V reads (Problem::fp8.pretransposed_v): the V operand handed to the
// forward is V^T already, so neither a transpose launch nor the producer transposes it.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/attention_shape.hpp"

namespace fl::device {

// Bytes of V^T for `shape`: B x H_kv x D rows of N_k rounded up to 128 key positions (a 128-byte swizzle
// span, so every TMA box of V^T lies inside its row).
std::size_t transposed_v_bytes(common::AttentionShape const& shape);

// V's row-major codes (B, H_kv, N_k, D) as V^T: every byte where kernels_src/fa3_sm90_v_transpose_map.h's
// vt_global_offset puts it (row `column` of each (batch, kv head), position p holding key permuted_key(p):
// within each 16 keys the order {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15}), the positions of
// keys at or past N_k zero codes: the bytes the transpose launch (fa3_sm90_transpose.cuh) writes.
std::vector<std::uint8_t> transposed_v_codes(common::AttentionShape const& shape,
                                             std::span<std::uint8_t const> v_codes);

}  // namespace fl::device
