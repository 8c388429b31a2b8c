// FP8 quantised on the device (Problem::fp8.on_device): the quantisation launches go first in fa3_sm90's
// and fa2_fp8's sequences (so fa-bench times them), the program is the file that adds their kernels,
// per-tensor factors reach the forward through uniform per-block arrays, and the host path is unchanged.
#include <catch2/catch.hpp>

#include "device/families/families.hpp"
#include "device/families/fp8_quantize_launches.hpp"
#include "device/run/device_problem.hpp"

using namespace fl;
using namespace fl::device;
using common::Fp8Scaling;
using common::Precision;

namespace {

Problem fp8_problem(Fp8Scaling scaling, bool on_device) {
  Problem p;
  p.shape = {1, 4, 2, 300, 513, 128, false, 0.0};
  p.dtype = Precision::fp8_e4m3;
  p.fp8 = {scaling, 128, true, 0, on_device};
  return p;
}

std::vector<std::string> launch_names(Family const& f, Problem const& p) {
  std::vector<std::string> out;
  for (auto const& step : f.launches(f.default_config(p), p)) out.push_back(step.name_expression);
  return out;
}

}  // namespace

TEST_CASE("fa3_sm90 FP8 quantised on the host: no quantisation launch, the program and names unchanged",
          "[device][fp8]") {
  Fa3Sm90Family const f;
  auto const p = fp8_problem(Fp8Scaling::per_tensor, false);
  CHECK(f.source_file(p) == "fa3_sm90_fwd.cu");
  auto const names = launch_names(f, p);
  REQUIRE(names.size() == 2);
  CHECK(names[0] == "fa3_sm90_transpose_v<128>");
  CHECK(names[1].find(", false, false") != std::string::npos);  // full mask, per-tensor factors by value
  CHECK(descale_block_rows(p) == 0);
  CHECK(f.scratch(f.default_config(p), p).fp8_amax == 0);
  CHECK(describe(p).find("quantized_on_device") == std::string::npos);
}

TEST_CASE("fa3_sm90 FP8 per block quantised on the device: one quantisation launch before the transpose",
          "[device][fp8]") {
  Fa3Sm90Family const f;
  auto const p = fp8_problem(Fp8Scaling::per_block, true);
  CHECK(f.source_file(p) == "fp8_quantize_fa3_sm90_fwd.cu");
  auto const config = f.default_config(p);
  auto const steps = f.launches(config, p);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].name_expression == "fp8_quantize<__nv_fp8_e4m3, 128, false>");
  CHECK(steps[1].name_expression == "fa3_sm90_transpose_v<128>");
  // One CTA per descale block of the tensor with most (Q: 4 heads x ceil(300 / 128); K, V: 2 x 5), x Q, K, V.
  CHECK(steps[0].grid.x == 12);
  CHECK(steps[0].grid.y == 3);
  CHECK_FALSE(steps[0].takes_tensor_maps);
  CHECK(fp8_descale_blocks(p, 0) == 12);
  CHECK(fp8_descale_blocks(p, 1) == 10);
  // Every launched kernel is compiled into the program.
  auto const names = f.name_expressions(config, p);
  for (auto const& step : steps)
    CHECK(std::find(names.begin(), names.end(), step.name_expression) != names.end());
  CHECK(f.scratch(config, p).fp8_amax == 0);  // per block needs no amax scratch
  CHECK(describe(p).find("per_block128 incoherent quantized_on_device") != std::string::npos);
}

TEST_CASE("FP8 per tensor quantised on the device: amax, scale, codes, and uniform per-block factors",
          "[device][fp8]") {
  Fa3Sm90Family const f;
  auto const p = fp8_problem(Fp8Scaling::per_tensor, true);
  auto const config = f.default_config(p);
  REQUIRE_FALSE(f.violates(config, p));
  CHECK(descale_block_rows(p) == kUniformDescaleBlockRows);
  auto const steps = f.launches(config, p);
  REQUIRE(steps.size() == 5);
  CHECK(steps[0].name_expression == "fp8_block_amax<128>");
  CHECK(steps[1].name_expression == "fp8_tensor_scale<__nv_fp8_e4m3>");
  CHECK(steps[1].grid.x == 1);
  CHECK(steps[2].name_expression == "fp8_quantize<__nv_fp8_e4m3, 128, true>");
  // The forward reads the factors from the arrays the launches fill (kBlockDescale).
  CHECK(steps[4].name_expression.find(", false, true") != std::string::npos);
  // Q: 4 x ceil(300 / 256) blocks, K and V 2 x ceil(513 / 256) each, and three scales, in fp64.
  CHECK(f.scratch(config, p).fp8_amax == sizeof(double) * (8 + 2 * 6 + 3));
  // The device problem holds the bf16 inputs besides the codes.
  auto const host = fp8_problem(Fp8Scaling::per_tensor, false);
  CHECK(device::DeviceProblem::bytes_needed(p, {}) >
        device::DeviceProblem::bytes_needed(host, {}) + 2 * p.shape.q_elements());
}

TEST_CASE("fa2_fp8 quantised on the device runs the same launches first", "[device][fp8]") {
  Fa2Fp8Family const f;
  auto p = fp8_problem(Fp8Scaling::per_tensor, true);
  CHECK(f.source_file(p) == "fp8_quantize_fa2_fp8_fwd.cu");
  auto const names = launch_names(f, p);
  REQUIRE(names.size() == 4);
  CHECK(names[0] == "fp8_block_amax<128>");
  CHECK(names[3].rfind("fa2_fp8_fwd<", 0) == 0);
  CHECK(names[3].find(", true, false>") != std::string::npos);  // kBlockDescale, full mask
  CHECK(f.scratch(f.default_config(p), p).fp8_amax > 0);
  p.fp8.on_device = false;
  CHECK(launch_names(f, p).size() == 1);
  CHECK(f.source_file(p) == "fa2_fp8_fwd.cu");
}
