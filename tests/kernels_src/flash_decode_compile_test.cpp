// flash_decode under NVRTC on this machine (no GPU needed): the default configs at decode shapes compile for
// sm_90a without spills (both kernels), and a config the host rejects is rejected by the kernel too (both
// read kernels_src/flash_decode_config.h).
#include <catch2/catch.hpp>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/kernels_src/compile_checks.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;
using runtime::TargetArch;

namespace {

Problem decode_problem(int d, int heads_q, int heads_kv, int n_q, int n_k, bool causal, Precision dtype) {
  Problem p;
  p.shape = {1, heads_q, heads_kv, n_q, n_k, d, causal, 0.0};
  p.dtype = dtype;
  return p;
}

}  // namespace

TEST_CASE("flash_decode default configs compile for sm_90a without spills", "[kernels][nvrtc]") {
  FlashDecodeFamily const f;
  std::vector<std::pair<Config, Problem>> instances;
  for (auto const& p : {decode_problem(64, 32, 4, 16, 32768, false, Precision::bf16),
                        decode_problem(64, 16, 16, 1, 32768, false, Precision::bf16),  // one 16-row tile
                        decode_problem(128, 32, 8, 1, 32768, true, Precision::fp16),
                        decode_problem(128, 16, 16, 16, 4096, false, Precision::bf16),
                        decode_problem(256, 8, 1, 4, 8192, true, Precision::bf16)}) {
    REQUIRE_FALSE(f.unsupported(p));
    instances.emplace_back(f.default_config(p), p);
  }
  auto request = device::make_family_request(f, instances.front().first, instances.front().second,
                                             {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE(request);
  request->name_expressions.clear();
  for (auto const& [c, p] : instances)
    for (auto const& name : f.name_expressions(c, p)) request->name_expressions.push_back(name);
  test::compiles_spill_free(request.value());
}

TEST_CASE("a config flash_decode's host side rejects is rejected by the kernel too", "[kernels][nvrtc]") {
  FlashDecodeFamily const f;
  auto const p = decode_problem(128, 32, 8, 1, 4096, false, Precision::bf16);
  auto c = f.default_config(p);
  c["kBlockM"] = 64;  // 4 row tiles x (64 + 16) accumulators: over the register budget
  REQUIRE(f.violates(c, p));
  auto const program = device::compile_family_config(f, c, p, {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE_FALSE(program);
  CHECK(program.error().log.find("flash_decode_config.h") != std::string::npos);
}
