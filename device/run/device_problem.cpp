#include "device/run/device_problem.hpp"

#include <cstdint>

#include "device/families/fp8_quantize_launches.hpp"
#include "device/run/buffer_upload.hpp"
#include "device/run/fp8_upload.hpp"
#include "device/run/fp8_v_layout.hpp"

namespace fl::device {

using namespace run_detail;

namespace {

constexpr std::uint8_t kPoisonByte = 0xFF;  // fp16/bf16/fp32 NaN
constexpr double kLog2e = 1.4426950408889634;

// Q, K, V of a 16-bit problem: the encodings made once when the inputs carry them, else converted now.
runtime::Status upload_inputs(DeviceProblem& dp, Problem const& problem, HostInputs const& inputs) {
  if (encoded_for(problem, inputs)) {
    if (auto st = upload_bits(dp.q, inputs.encoded->q); !st) return st;
    if (auto st = upload_bits(dp.k, inputs.encoded->k); !st) return st;
    return upload_bits(dp.v, inputs.encoded->v);
  }
  if (auto st = upload_16bit(dp.q, inputs.q, problem.dtype); !st) return st;
  if (auto st = upload_16bit(dp.k, inputs.k, problem.dtype); !st) return st;
  return upload_16bit(dp.v, inputs.v, problem.dtype);
}

// Bytes of one Q or K element: one FP8 code or a 16-bit value. O is always 16-bit (bf16 for FP8).
std::size_t input_element_bytes(common::Precision dtype) {
  return common::is_fp8(dtype) ? 1 : kBytes16;
}
// V's: bf16 when an FP8 problem multiplies P V in bf16.
std::size_t v_element_bytes(Problem const& problem) {
  return problem.fp8.bf16_pv && common::is_fp8(problem.dtype) ? kBytes16 : input_element_bytes(problem.dtype);
}
// V's buffer: V^T's padded rows when it is given pre-transposed, else (B, H_kv, N_k, D) elements.
std::size_t v_bytes(Problem const& problem) {
  if (pretransposed_v(problem)) return transposed_v_bytes(problem.shape);
  return v_element_bytes(problem) * problem.shape.kv_elements();
}

}  // namespace

std::size_t DeviceProblem::bytes_needed(Problem const& problem, ScratchBytes const& scratch) {
  auto const& s = problem.shape;
  std::size_t const in_bytes = input_element_bytes(problem.dtype);
  std::size_t bytes = in_bytes * (s.q_elements() + s.kv_elements()) + v_bytes(problem) +
                      kBytes16 * s.q_elements() + sizeof(float) * s.lse_elements() + scratch.total();
  // FP8 per-block descale factors: at most one per row of Q, K, V.
  if (common::is_fp8(problem.dtype))
    bytes += sizeof(float) * (s.lse_elements() + 2 * s.kv_elements() / s.head_dim);
  // Quantised on the device: the bf16 inputs and the signs besides the codes.
  if (quantizes_on_device(problem))
    bytes += kBytes16 * (s.q_elements() + 2 * s.kv_elements()) + sizeof(float) * std::size_t(s.head_dim);
  if (problem.direction == Direction::backward)  // dO, dQ, dK, dV, D
    bytes += kBytes16 * (2 * s.q_elements() + 2 * s.kv_elements()) + sizeof(float) * s.lse_elements();
  return bytes;
}

runtime::Result<DeviceProblem> DeviceProblem::create(Problem const& problem, HostInputs const& inputs,
                                                     ScratchBytes const& scratch, HostOutputs const* forward,
                                                     Fp8Operands const* fp8_ops) {
  auto const& s = problem.shape;
  if (auto const stored = common::storage_precision(problem.dtype); inputs.dtype && *inputs.dtype != stored)
    return runtime::Error{"input",
                          "the inputs are exact in " + std::string(common::name(*inputs.dtype)) + ", but " +
                              describe(problem) + " stores " + std::string(common::name(stored)),
                          ""};
  bool const fp8 = common::is_fp8(problem.dtype);
  std::size_t const in_bytes = input_element_bytes(problem.dtype);
  auto q = runtime::DeviceBuffer::allocate(in_bytes * s.q_elements());
  if (!q) return q.error();
  auto k = runtime::DeviceBuffer::allocate(in_bytes * s.kv_elements());
  if (!k) return k.error();
  auto v = runtime::DeviceBuffer::allocate(v_bytes(problem));
  if (!v) return v.error();
  // Pre-transposed V: its padding positions are zero codes, which the device quantisation never writes
  // (P is 0 there, but 0 times a NaN code would be NaN).
  if (pretransposed_v(problem))
    if (auto st = v->fill_bytes(0); !st) return st.error();
  auto o = runtime::DeviceBuffer::allocate(kBytes16 * s.q_elements());
  if (!o) return o.error();
  auto lse = runtime::DeviceBuffer::allocate(sizeof(float) * s.lse_elements());
  if (!lse) return lse.error();
  DeviceProblem dp{std::move(q.value()),   std::move(k.value()), std::move(v.value()), std::move(o.value()),
                   std::move(lse.value()), std::nullopt,         std::nullopt,         std::nullopt,
                   std::nullopt,           std::nullopt,         std::nullopt,         {},
                   std::nullopt,           std::nullopt,         std::nullopt,         std::nullopt,
                   std::nullopt,           std::nullopt,         std::nullopt};
  if (scratch.total() > 0) {
    auto sc = runtime::DeviceBuffer::allocate(scratch.total());
    if (!sc) return sc.error();
    // Zero: the counters a kernel expects at zero when it starts (dq_semaphore, tile_counter) and keeps
    // so for the next launch; the other fields are written before they are read.
    if (auto st = sc->fill_bytes(0); !st) return st.error();
    dp.scratch.emplace(std::move(sc.value()));
  }
  bool const backward = problem.direction == Direction::backward;
  if (fp8 && backward) return runtime::Error{"input", "FP8 problems are forward only", ""};
  dp.params.q_descale = dp.params.k_descale = dp.params.v_descale = 1.0f;
  dp.params.p_scale = 1.0f;
  if (fp8) {
    if (!fp8_ops)
      return runtime::Error{"input",
                            "an FP8 problem needs its FP8 operands (numerics::gpu::fp8_operands_for)", ""};
    if (auto st = upload_fp8(dp, problem, inputs, *fp8_ops); !st) return st.error();
  } else {
    if (auto st = upload_inputs(dp, problem, inputs); !st) return st.error();
  }
  if (backward) {
    if (inputs.d_o.size() != s.q_elements())
      return runtime::Error{"input", "a backward problem needs dO", ""};
    auto const allocate_into = [](std::optional<runtime::DeviceBuffer>& slot,
                                  std::size_t bytes) -> runtime::Status {
      auto b = runtime::DeviceBuffer::allocate(bytes);
      if (!b) return b.error();
      slot.emplace(std::move(b.value()));
      return slot->fill_bytes(kPoisonByte);
    };
    for (auto [slot, bytes] :
         {std::pair{&dp.d_o, kBytes16 * s.q_elements()}, std::pair{&dp.dq, kBytes16 * s.q_elements()},
          std::pair{&dp.dk, kBytes16 * s.kv_elements()}, std::pair{&dp.dv, kBytes16 * s.kv_elements()},
          std::pair{&dp.delta, sizeof(float) * s.lse_elements()}})
      if (auto st = allocate_into(*slot, bytes); !st) return st.error();
    if (auto st = encoded_for(problem, inputs) ? upload_bits(*dp.d_o, inputs.encoded->d_o)
                                               : upload_16bit(*dp.d_o, inputs.d_o, problem.dtype);
        !st)
      return st.error();
    if (forward) {
      if (auto st = upload_16bit(dp.o, forward->o, problem.dtype); !st) return st.error();
      if (auto st = dp.lse.upload(forward->lse.data(), forward->lse.size() * sizeof(float)); !st)
        return st.error();
    }
  }
  if (!backward || !forward) {
    if (auto st = dp.o.fill_bytes(kPoisonByte); !st) return st.error();
    if (auto st = dp.lse.fill_bytes(kPoisonByte); !st) return st.error();
  }

  fa::AttentionParams& p = dp.params;
  p.q = as_pointer<void const>(dp.q);
  p.k = as_pointer<void const>(dp.k);
  p.v = as_pointer<void const>(dp.v);
  p.o = as_pointer<void>(dp.o);
  p.lse = as_pointer<float>(dp.lse);
  if (dp.scratch) {
    std::size_t offset = 0;
    auto const take = [&](std::size_t bytes) {
      float* ptr = bytes ? as_pointer<float>(*dp.scratch, offset) : nullptr;
      offset += bytes;
      return ptr;
    };
    p.scratch_s = take(scratch.s);
    p.scratch_p = take(scratch.p);
    p.scratch_m = take(scratch.m);
    p.scratch_l = take(scratch.l);
    p.scratch_o = take(scratch.o);
    p.dq_accum = take(scratch.dq_accum);
    p.v_transposed = take(scratch.v_transposed);
    p.dq_semaphore = reinterpret_cast<int*>(take(scratch.dq_semaphore));
    p.tile_counter = reinterpret_cast<int*>(take(scratch.tile_counter));
    offset = (offset + ScratchBytes::kScratchAlign - 1) / ScratchBytes::kScratchAlign *
             ScratchBytes::kScratchAlign;
    p.fp8_amax = reinterpret_cast<double*>(take(scratch.fp8_amax));
  }
  long long const d = s.head_dim;
  p.q_row_stride = p.o_row_stride = d;
  p.q_head_stride = p.o_head_stride = d * s.seqlen_q;
  p.q_batch_stride = p.o_batch_stride = d * s.seqlen_q * s.heads_q;
  p.k_row_stride = p.v_row_stride = d;
  p.k_head_stride = p.v_head_stride = d * s.seqlen_k;
  p.k_batch_stride = p.v_batch_stride = d * s.seqlen_k * s.heads_kv;
  p.batch = s.batch;
  p.heads_q = s.heads_q;
  p.heads_kv = s.heads_kv;
  p.seqlen_q = s.seqlen_q;
  p.seqlen_k = s.seqlen_k;
  p.head_dim = s.head_dim;
  p.softmax_scale = static_cast<float>(s.scale());
  p.softmax_scale_log2 = static_cast<float>(s.scale() * kLog2e);
  if (backward) {
    p.d_o = as_pointer<void const>(*dp.d_o);
    p.d_q = as_pointer<void>(*dp.dq);
    p.d_k = as_pointer<void>(*dp.dk);
    p.d_v = as_pointer<void>(*dp.dv);
    p.delta = as_pointer<float>(*dp.delta);
  }
  return dp;
}

runtime::Result<HostOutputs> DeviceProblem::download(Problem const& problem) const {
  HostOutputs out;
  std::vector<std::uint16_t> bits(problem.shape.q_elements());
  if (auto st = o.download(bits.data(), bits.size() * sizeof(std::uint16_t)); !st) return st.error();
  out.o = decode_16bit(bits, problem.dtype);
  out.lse.resize(problem.shape.lse_elements());
  if (auto st = lse.download(out.lse.data(), out.lse.size() * sizeof(float)); !st) return st.error();
  if (problem.direction == Direction::backward) {
    auto const fetch = [&](runtime::DeviceBuffer const& b, std::size_t n,
                           std::vector<float>& dst) -> runtime::Status {
      std::vector<std::uint16_t> raw(n);
      if (auto st = b.download(raw.data(), n * sizeof(std::uint16_t)); !st) return st;
      dst = decode_16bit(raw, problem.dtype);
      return {};
    };
    if (auto st = fetch(*dq, problem.shape.q_elements(), out.dq); !st) return st.error();
    if (auto st = fetch(*dk, problem.shape.kv_elements(), out.dk); !st) return st.error();
    if (auto st = fetch(*dv, problem.shape.kv_elements(), out.dv); !st) return st.error();
  }
  return out;
}

}  // namespace fl::device
