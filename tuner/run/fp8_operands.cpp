#include "tuner/run/fp8_operands.hpp"

#include <cuda_fp8.h>

#include <stdexcept>

#include "numerics/fp8_quantization.hpp"
#include "numerics/incoherent_processing.hpp"

namespace fl::tuner {

namespace {

struct Quantised {
  std::vector<std::uint8_t> codes;
  std::vector<float> descales;
  int block_rows = 0;
};

Quantised quantise(std::vector<double> const& x, int matrices, int rows, int cols, Problem const& p) {
  auto const t = numerics::quantize_fp8(x, matrices, rows, cols, p.dtype, p.fp8.scaling, p.fp8.block_rows);
  Quantised out;
  out.codes.resize(t.codes.size());
  for (std::size_t i = 0; i < t.codes.size(); ++i) out.codes[i] = fp8_code(t.codes[i], p.dtype);
  out.descales = t.descales;
  out.block_rows = t.block_rows;
  return out;
}

}  // namespace

std::uint8_t fp8_code(float value, numerics::Precision format) {
  return __nv_cvt_float_to_fp8(value, __NV_SATFINITE,
                               format == numerics::Precision::fp8_e5m2 ? __NV_E5M2 : __NV_E4M3);
}

Fp8Operands quantize_fp8_operands(Problem const& problem, HostInputs const& inputs) {
  if (!numerics::is_fp8(problem.dtype))
    throw std::invalid_argument("quantize_fp8_operands: dtype is not FP8");
  auto const& s = problem.shape;
  if (inputs.q.size() != s.q_elements() || inputs.k.size() != s.kv_elements() ||
      inputs.v.size() != s.kv_elements())
    throw std::invalid_argument("quantize_fp8_operands: Q, K, V sizes do not match " + describe(problem));
  std::vector<double> q(inputs.q.begin(), inputs.q.end());
  std::vector<double> k(inputs.k.begin(), inputs.k.end());
  std::vector<double> const v(inputs.v.begin(), inputs.v.end());
  if (problem.fp8.incoherent) {
    // (Q M)(K M)^T = Q K^T: the output is unchanged, outliers are spread before quantisation.
    auto const t = numerics::make_incoherent_transform(s.head_dim, problem.fp8.incoherent_seed);
    numerics::apply_incoherent(t, q);
    numerics::apply_incoherent(t, k);
  }
  int const q_mats = s.batch * s.heads_q, kv_mats = s.batch * s.heads_kv;
  auto qq = quantise(q, q_mats, s.seqlen_q, s.head_dim, problem);
  auto kq = quantise(k, kv_mats, s.seqlen_k, s.head_dim, problem);
  auto vq = quantise(v, kv_mats, s.seqlen_k, s.head_dim, problem);
  Fp8Operands out;
  out.q = std::move(qq.codes);
  out.k = std::move(kq.codes);
  out.v = std::move(vq.codes);
  out.q_descale = std::move(qq.descales);
  out.k_descale = std::move(kq.descales);
  out.v_descale = std::move(vq.descales);
  out.per_tensor = problem.fp8.scaling == numerics::Fp8Scaling::per_tensor;
  out.block_rows = out.per_tensor ? 0 : problem.fp8.block_rows;
  return out;
}

}  // namespace fl::tuner
