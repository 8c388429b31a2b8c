#include "device/run/host_tensors.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/parallel_for.hpp"

namespace fl::device {

std::vector<std::uint16_t> encode_16bit(std::vector<float> const& values, common::Precision dtype) {
  dtype = common::storage_precision(dtype);
  std::vector<std::uint16_t> out(values.size());
  // In parallel: a headline backward's four tensors are 134M conversions.
  common::parallel_for(values.size(), common::elementwise_threads(values.size()),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t i = begin; i < end; ++i) {
                           if (dtype == common::Precision::bf16) {
                             out[i] = static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(values[i])).x;
                           } else {
                             out[i] = static_cast<__half_raw>(__float2half_rn(values[i])).x;
                           }
                         }
                       });
  return out;
}

std::vector<float> decode_16bit(std::vector<std::uint16_t> const& bits, common::Precision dtype) {
  dtype = common::storage_precision(dtype);
  std::vector<float> out(bits.size());
  // In parallel, as encode_16bit: a tuning candidate's backward outputs are 134M decodes at headline shapes.
  common::parallel_for(bits.size(), common::elementwise_threads(bits.size()),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t i = begin; i < end; ++i) {
                           if (dtype == common::Precision::bf16) {
                             __nv_bfloat16_raw raw;
                             raw.x = bits[i];
                             out[i] = __bfloat162float(__nv_bfloat16(raw));
                           } else {
                             __half_raw raw;
                             raw.x = bits[i];
                             out[i] = __half2float(__half(raw));
                           }
                         }
                       });
  return out;
}

EncodedInputs encode_inputs(HostInputs const& inputs, common::Precision dtype) {
  dtype = common::storage_precision(dtype);
  return EncodedInputs{dtype, encode_16bit(inputs.q, dtype), encode_16bit(inputs.k, dtype),
                       encode_16bit(inputs.v, dtype), encode_16bit(inputs.d_o, dtype)};
}

}  // namespace fl::device
