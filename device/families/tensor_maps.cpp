#include "device/families/tensor_maps.hpp"

namespace fl::device {

runtime::TensorElement tensor_element(common::Precision dtype) {
  if (common::is_fp8(dtype)) return runtime::TensorElement::byte;
  return dtype == common::Precision::fp16 ? runtime::TensorElement::fp16 : runtime::TensorElement::bf16;
}

runtime::AttentionTensorView attention_view(Problem const& problem, runtime::TensorElement element,
                                            void const* base, int heads, int rows, long long batch_stride,
                                            long long head_stride, long long row_stride) {
  return runtime::AttentionTensorView{reinterpret_cast<CUdeviceptr>(base),
                                      element,
                                      std::uint64_t(problem.shape.batch),
                                      std::uint64_t(heads),
                                      std::uint64_t(rows),
                                      std::uint64_t(problem.shape.head_dim),
                                      std::uint64_t(batch_stride),
                                      std::uint64_t(head_stride),
                                      std::uint64_t(row_stride)};
}

runtime::AttentionTensorView attention_view(Problem const& problem, runtime::TensorElement element,
                                            fa::AttentionParams const& p, AttentionTensor tensor) {
  auto const& s = problem.shape;
  switch (tensor) {
    case AttentionTensor::q:
      return attention_view(problem, element, p.q, s.heads_q, s.seqlen_q, p.q_batch_stride, p.q_head_stride,
                            p.q_row_stride);
    case AttentionTensor::k:
      return attention_view(problem, element, p.k, s.heads_kv, s.seqlen_k, p.k_batch_stride, p.k_head_stride,
                            p.k_row_stride);
    case AttentionTensor::v:
      return attention_view(problem, element, p.v, s.heads_kv, s.seqlen_k, p.v_batch_stride, p.v_head_stride,
                            p.v_row_stride);
    case AttentionTensor::o:
      return attention_view(problem, element, p.o, s.heads_q, s.seqlen_q, p.o_batch_stride, p.o_head_stride,
                            p.o_row_stride);
    case AttentionTensor::d_o:
      return attention_view(problem, element, p.d_o, s.heads_q, s.seqlen_q, p.o_batch_stride, p.o_head_stride,
                            p.o_row_stride);
  }
  return {};
}

}  // namespace fl::device
