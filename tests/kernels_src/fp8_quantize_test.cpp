// kernels_src/fp8_quantize's arithmetic against numerics' host model, on the CPU: the warp's schedule of
// the Walsh-Hadamard butterflies (a lane's slice, then lane pairs) gives numerics::apply_incoherent's bits,
// the block scale is numerics::fp8_scale_for, and the quantisation kernels compile for sm_90a without
// spills. The GPU kernels themselves: fp8_quantize_gpu_test.cpp ([gpu]).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "device/families/fp8_quantize_launches.hpp"
#include "kernels_src/fp8_quantize.h"
#include "numerics/fp8_quantization.hpp"
#include "numerics/incoherent_processing.hpp"
#include "numerics/precision.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/kernels_src/compile_checks.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;
using common::Precision;

namespace {

// Rows of bf16 values spanning 2^-12 .. 2^7 (an outlier recipe): sums of such values need more than fp32's
// 24 bits, so only a schedule that does the host's fp64 operations in the host's order matches it.
std::vector<double> spread_rows(int rows, int d, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> exponent(-12, 7);
  std::vector<double> x(std::size_t(rows) * std::size_t(d));
  for (double& v : x) v = double(numerics::round_to(Precision::bf16, std::ldexp(normal(rng), exponent(rng))));
  return x;
}

// One row as its lanes compute it in fp8_quantize_values.cuh's quantisation_values: lanes_per_row lanes of
// kSliceElements each, signs, the butterflies inside each lane's slice, the cross-lane stages (each lane
// reads its partner's value from before the stage, as __shfl_xor_sync does), then the 1/sqrt(d) factor.
template <int kHeadDim>
void rotate_as_the_warp(double* row, std::vector<double> const& signs) {
  constexpr int kLanes = fp8q::lanes_per_row<kHeadDim>();
  constexpr int kSlice = fp8q::kSliceElements;
  double lanes[kLanes][kSlice];
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int j = 0; j < kSlice; ++j)
      lanes[lane][j] = row[lane * kSlice + j] * signs[std::size_t(lane * kSlice + j)];
    fp8q::butterflies_in_lane<kSlice>(lanes[lane]);
  }
  for (int half = kSlice; half < kHeadDim; half *= 2) {
    int const partner_mask = half / kSlice;
    double before[kLanes][kSlice];
    std::memcpy(before, lanes, sizeof(lanes));
    for (int lane = 0; lane < kLanes; ++lane)
      for (int j = 0; j < kSlice; ++j)
        lanes[lane][j] = fp8q::butterfly_across_lanes(before[lane][j], before[lane ^ partner_mask][j],
                                                      fp8q::own_sign((lane & partner_mask) == 0));
  }
  double const norm = 1.0 / std::sqrt(double(kHeadDim));
  for (int lane = 0; lane < kLanes; ++lane)
    for (int j = 0; j < kSlice; ++j) row[lane * kSlice + j] = lanes[lane][j] * norm;
}

template <int kHeadDim>
void check_rotation_bits() {
  int const rows = 64;
  auto const t = numerics::make_incoherent_transform(kHeadDim, 7);
  auto host = spread_rows(rows, kHeadDim, 11);
  auto warp = host;
  numerics::apply_incoherent(t, host);
  for (int r = 0; r < rows; ++r)
    rotate_as_the_warp<kHeadDim>(warp.data() + std::size_t(r) * kHeadDim, t.signs);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < host.size(); ++i)
    differing += std::memcmp(&host[i], &warp[i], sizeof(double)) != 0;
  INFO("d = " << kHeadDim);
  CHECK(differing == 0);
}

}  // namespace

TEST_CASE("fp8_quantize's warp schedule of the Hadamard rotation gives numerics' bits", "[kernels][fp8]") {
  check_rotation_bits<64>();
  check_rotation_bits<128>();
  check_rotation_bits<256>();
}

TEST_CASE("fp8_quantize's test rows need fp64: in fp32 the rotation differs from numerics'",
          "[kernels][fp8]") {
  // Guards the test above: its rows must be ones where a cheaper (fp32) rotation would not pass.
  int const d = 128;
  auto const t = numerics::make_incoherent_transform(d, 7);
  auto host = spread_rows(64, d, 11);
  std::vector<float> single(host.begin(), host.end());
  numerics::apply_incoherent(t, host);
  std::size_t differing = 0;
  for (std::size_t start = 0; start < single.size(); start += d) {
    float* x = single.data() + start;
    for (int e = 0; e < d; ++e) x[e] *= float(t.signs[std::size_t(e)]);
    for (int half = 1; half < d; half *= 2)
      for (int block = 0; block < d; block += 2 * half)
        for (int e = block; e < block + half; ++e) {
          float const a = x[e], b = x[e + half];
          x[e] = a + b;
          x[e + half] = a - b;
        }
    for (int e = 0; e < d; ++e) {
      float const rounded = float(double(x[e]) / std::sqrt(double(d)));
      differing += rounded != float(host[start + std::size_t(e)]);
    }
  }
  CHECK(differing > 0);
}

TEST_CASE("fp8_quantize's block scale is numerics::fp8_scale_for", "[kernels][fp8]") {
  double const inf = std::numeric_limits<double>::infinity();
  for (auto [format, max_finite] :
       {std::pair{Precision::fp8_e4m3, fp8q::kE4m3Max}, std::pair{Precision::fp8_e5m2, fp8q::kE5m2Max}}) {
    CHECK(max_finite == numerics::max_finite(format));
    for (double amax : {0.0, 1e-30, 3.0e-3, 0.7071067811865476, 1.0, 11.3, 448.0, 6.0e4, 1e300, inf,
                        std::numeric_limits<double>::quiet_NaN()}) {
      INFO(common::name(format) << " amax " << amax);
      CHECK(fp8q::scale_for_amax(amax, max_finite) == numerics::fp8_scale_for(format, amax));
    }
  }
}

// With a pre-transposed V too (fp8_quantize_transposed_v: V's codes written as fa3_sm90's V^T).
TEST_CASE("fp8_quantize kernels compile for sm_90a without spills", "[kernels][nvrtc][fp8]") {
  device::Fa3Sm90Family const f;
  auto p = device::headline_problem(2048, 128, false, Precision::fp8_e4m3, device::Direction::forward);
  p.fp8.on_device = true;
  p.fp8.incoherent = true;
  auto request = device::make_family_request(f, f.default_config(p), p,
                                             {runtime::TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE(request);
  request->name_expressions.clear();
  for (auto dtype : {Precision::fp8_e4m3, Precision::fp8_e5m2})
    for (int d : {64, 128, 256})
      for (auto scaling : {common::Fp8Scaling::per_tensor, common::Fp8Scaling::per_block})
        for (bool pretransposed_v : {false, true}) {
          auto q = device::headline_problem(2048, d, false, dtype, device::Direction::forward);
          q.fp8.on_device = true;
          q.fp8.scaling = scaling;
          q.fp8.pretransposed_v = pretransposed_v;
          auto& names = request->name_expressions;
          for (auto const& name : device::fp8_quantize_name_expressions(q))
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
  // fp8_quantize and fp8_quantize_transposed_v per dtype, d and scaling.
  auto const& names = request->name_expressions;
  REQUIRE(std::count_if(names.begin(), names.end(), [](std::string const& n) {
            return n.rfind("fp8_quantize_transposed_v<", 0) == 0;
          }) == 2 * 3 * 2);
  auto const program = test::compiles_spill_free(request.value());
  for (auto const& name : request->name_expressions) {
    INFO(name);
    // 4 warps per CTA and 16 or more CTAs per SM want no more than 128 registers.
    CHECK(program.resources_of(name)->registers <= 128);
  }
}
