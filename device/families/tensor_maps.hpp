#pragma once
// The TMA families' tensor maps, described: a family's Family::tensor_maps lists one runtime::TensorMapSpec
// per tensor in the order of the kernel's descriptor struct (kernels_src/fa_tma_params.h), and
// Family::tma_argument encodes them through runtime::encode_tensor_maps, the one encoding loop. These
// helpers build the usual specs: a (B, H, N, D) tensor of the problem, in the problem's element type.
#include "device/problem.hpp"
#include "kernels_src/fa_params.h"
#include "runtime/tensor_map.hpp"

namespace fl::device {

// How the copy engine sees `dtype`: fp16, bf16, or bytes for the FP8 codes.
runtime::TensorElement tensor_element(common::Precision dtype);

// A (B, H, N, D) tensor with the problem's batch and head dim: `heads` x `rows`, strides in elements.
runtime::AttentionTensorView attention_view(Problem const& problem, runtime::TensorElement element,
                                            void const* base, int heads, int rows, long long batch_stride,
                                            long long head_stride, long long row_stride);

// The params' Q, K, V, O or dO as such a view (dO with O's strides, as in every backward here).
enum class AttentionTensor { q, k, v, o, d_o };
runtime::AttentionTensorView attention_view(Problem const& problem, runtime::TensorElement element,
                                            fa::AttentionParams const& params, AttentionTensor tensor);

}  // namespace fl::device
