// kernels_src/fp8_quantize.cuh on the GPU: its codes and descales are numerics' host quantisation bit for
// bit (d 64/128/256, e4m3 and e5m2, per tensor and per block, with and without the incoherent rotation,
// odd n, GQA), and the FP8 forwards fed by it pass fa-check's FP8 tolerances on the awkward problems.
// Skipped where there is no GPU.
#include <catch2/catch.hpp>

#include <cstring>

#include "device/families/families.hpp"
#include "device/families/fp8_quantize_launches.hpp"
#include "device/run/device_problem.hpp"
#include "device/run/fp8_operands.hpp"
#include "device/run/fp8_v_layout.hpp"
#include "numerics/gpu/kernel_fp8_operands.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_source.hpp"
#include "runtime/module.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/kernels_src/edge_check.hpp"

using namespace fl;
using namespace fl::device;
using common::Fp8Scaling;
using common::Precision;

namespace {

// Normal inputs with every 97th element 64x larger (an outlier the rotation spreads; exact in bf16).
device::HostInputs outlier_inputs(Problem const& p) {
  device::HostInputs in = numerics::gpu::make_normal_inputs(p, 3);
  for (auto* t : {&in.q, &in.k, &in.v})
    for (std::size_t i = 0; i < t->size(); i += 97) (*t)[i] *= 64.f;
  return in;
}

std::vector<Problem> quantize_problems() {
  std::vector<Problem> out;
  for (auto [b, hq, hkv, nq, nk] :
       std::vector<std::array<int, 5>>{{1, 2, 1, 333, 257}, {2, 2, 2, 17, 130}, {1, 1, 1, 1024, 1000}})
    for (int d : {64, 128, 256})
      for (auto dtype : {Precision::fp8_e4m3, Precision::fp8_e5m2})
        for (auto [scaling, rows] :
             {std::pair{Fp8Scaling::per_tensor, 64}, std::pair{Fp8Scaling::per_block, 64},
              std::pair{Fp8Scaling::per_block, 128}})
          for (bool incoherent : {false, true}) {
            Problem p;
            p.shape = {b, hq, hkv, nq, nk, d, false, 0.0};
            p.dtype = dtype;
            p.fp8 = {scaling, rows, incoherent, 5, true};
            out.push_back(p);
          }
  return out;
}

// The host's factor of every device block: per block the same list; per tensor its one factor everywhere.
std::vector<float> expected_descales(std::vector<float> const& host, int blocks) {
  return host.size() == 1 ? std::vector<float>(std::size_t(blocks), host.front()) : host;
}

// One program holding every quantisation kernel of `problems` (`file`'s front end, none of its forwards:
// fa2_fp8's, or fa3_sm90's for fp8_quantize_transposed_v), loaded.
struct QuantizeModule {
  runtime::CompiledProgram program;
  runtime::LoadedModule module;
};
QuantizeModule load_quantize_kernels(std::vector<Problem> const& problems,
                                     char const* file = "fp8_quantize_fa2_fp8_fwd.cu") {
  auto source = runtime::load_kernel_source(file, test::kernels_dir());
  REQUIRE(source);
  auto request = runtime::make_compile_request(source.value(), runtime::TargetArch::sm_90a);
  for (auto const& p : problems)
    for (auto const& name : fp8_quantize_name_expressions(p))
      if (std::find(request.name_expressions.begin(), request.name_expressions.end(), name) ==
          request.name_expressions.end())
        request.name_expressions.push_back(name);
  auto program = runtime::compile(request);
  INFO((program.ok() ? std::string() : program.error().log));
  REQUIRE(program);
  auto module = runtime::LoadedModule::load(program->cubin);
  REQUIRE(module);
  return {std::move(program.value()), std::move(module.value())};
}

// `p`'s buffers after its quantisation launches (quantised on the device), with the inputs they quantised.
device::DeviceProblem quantized_on_device(runtime::PrimaryContext& context, QuantizeModule const& kernels,
                                          Problem const& p, device::HostInputs const& inputs) {
  ScratchBytes scratch;
  scratch.fp8_amax = fp8_amax_scratch_bytes(p);
  auto const factors = numerics::gpu::fp8_operands_for(p, inputs);  // quantised on the device: P scale, signs
  REQUIRE(factors);
  auto dp = device::DeviceProblem::create(p, inputs, scratch, nullptr, &*factors);
  REQUIRE(dp);
  for (auto const& step : fp8_quantize_launches(p)) {
    auto kernel = kernels.module.kernel(kernels.program.lowered_name(step.name_expression));
    REQUIRE(kernel);
    runtime::LaunchConfig launch;
    launch.grid = step.grid;
    launch.block = step.block;
    REQUIRE(runtime::launch(kernel.value(), launch, dp->params));
  }
  REQUIRE(context.synchronize());
  return std::move(dp.value());
}

}  // namespace

TEST_CASE("fp8_quantize on the GPU gives numerics' host codes and descales bit for bit",
          "[gpu][kernels][fp8]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  auto const problems = quantize_problems();
  auto const kernels = load_quantize_kernels(problems);
  for (auto const& p : problems) {
    INFO(describe(p));
    auto const inputs = outlier_inputs(p);
    auto const dp = quantized_on_device(*context, kernels, p, inputs);
    auto const host = numerics::gpu::quantize_fp8_operands(p, inputs);
    std::vector<std::uint8_t> const* host_codes[] = {&host.q, &host.k, &host.v};
    std::vector<float> const* host_descales[] = {&host.q_descale, &host.k_descale, &host.v_descale};
    runtime::DeviceBuffer const* codes[] = {&dp.q, &dp.k, &dp.v};
    runtime::DeviceBuffer const* descales[] = {&*dp.q_descale, &*dp.k_descale, &*dp.v_descale};
    for (int t = 0; t < 3; ++t) {
      INFO("tensor "
           << "QKV"[t]);
      std::vector<std::uint8_t> gpu(host_codes[t]->size());
      REQUIRE(codes[t]->download(gpu.data(), gpu.size()));
      std::size_t differing = 0;
      for (std::size_t i = 0; i < gpu.size(); ++i) differing += gpu[i] != (*host_codes[t])[i];
      CHECK(differing == 0);
      int const blocks = fp8_descale_blocks(p, t);
      std::vector<float> gpu_descales(static_cast<std::size_t>(blocks));
      REQUIRE(descales[t]->download(gpu_descales.data(), gpu_descales.size() * sizeof(float)));
      auto const want = expected_descales(*host_descales[t], blocks);
      REQUIRE(want.size() == gpu_descales.size());
      CHECK(std::memcmp(want.data(), gpu_descales.data(), want.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("fp8_quantize on the GPU writes a pre-transposed V as the host's V^T, bit for bit",
          "[gpu][kernels][fp8]") {
  // The transpose fused into the quantisation (fp8_quantize_transposed_v.cuh): V's buffer holds
  // device::transposed_v_codes of numerics' host codes, its zero padding included; Q's and K's codes and V's
  // descales as without it. Odd N_k (257, 1000: a partial 16-key group), 130 (two 64-row blocks and a tail).
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  auto problems = quantize_problems();
  for (auto& p : problems) p.fp8.pretransposed_v = true;
  auto const kernels = load_quantize_kernels(problems, "fp8_quantize_fa3_sm90_fwd.cu");
  for (auto const& p : problems) {
    INFO(describe(p));
    auto const inputs = outlier_inputs(p);
    auto const dp = quantized_on_device(*context, kernels, p, inputs);
    auto const host = numerics::gpu::quantize_fp8_operands(p, inputs);
    std::vector<std::uint8_t> gpu(transposed_v_bytes(p.shape));
    REQUIRE(dp.v.download(gpu.data(), gpu.size()));
    auto const want = transposed_v_codes(p.shape, host.v);
    REQUIRE(want.size() == gpu.size());
    std::size_t differing = 0;
    for (std::size_t i = 0; i < gpu.size(); ++i) differing += gpu[i] != want[i];
    CHECK(differing == 0);
    std::vector<std::uint8_t> k(host.k.size());
    REQUIRE(dp.k.download(k.data(), k.size()));
    CHECK(k == host.k);
    std::vector<float> v_descales(std::size_t(fp8_descale_blocks(p, 2)));
    REQUIRE(dp.v_descale->download(v_descales.data(), v_descales.size() * sizeof(float)));
    CHECK(v_descales == expected_descales(host.v_descale, int(v_descales.size())));
  }
}

TEST_CASE("fa3_sm90 FP8 quantised on the device passes the awkward problems", "[gpu][kernels][fp8]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa3Sm90Family const f;
  for (int d : {64, 128, 256})
    for (auto [dtype, scaling, rows, incoherent] :
         {std::tuple{Precision::fp8_e4m3, Fp8Scaling::per_block, 128, true},
          std::tuple{Precision::fp8_e4m3, Fp8Scaling::per_tensor, 64, true},
          std::tuple{Precision::fp8_e5m2, Fp8Scaling::per_tensor, 64, false}}) {
      Fp8Options const fp8{scaling, rows, incoherent, 0, true};
      INFO("d" << d << " " << common::name(dtype) << " " << common::name(scaling) << rows
               << (incoherent ? " incoherent" : ""));
      CHECK(test::passes_edge_problems(f, {}, d, false, dtype, nullptr, fp8));
    }
  Fp8Options const causal{Fp8Scaling::per_block, 128, true, 0, true};
  CHECK(test::passes_edge_problems(f, {}, 128, true, Precision::fp8_e4m3, nullptr, causal));
}

TEST_CASE("fa2_fp8 quantised on the device passes the awkward problems", "[gpu][kernels][fp8]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa2Fp8Family const f;
  Fp8Options const fp8{Fp8Scaling::per_block, 64, true, 0, true};
  CHECK(test::passes_edge_problems(f, {}, 128, false, Precision::fp8_e4m3, nullptr, fp8));
  Fp8Options const per_tensor{Fp8Scaling::per_tensor, 64, true, 0, true};
  CHECK(test::passes_edge_problems(f, {}, 64, true, Precision::fp8_e4m3, nullptr, per_tensor));
}
