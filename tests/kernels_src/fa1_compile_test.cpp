// fa1 under NVRTC (no GPU needed): every config of the search space compiles for sm_90a without spills, at
// every head dim and both masks; the defaults of every dtype also fit two CTAs per SM (registers and
// shared memory: the step is latency-bound, one CTA's O/m/l loads are hidden behind the other's products);
// a config the host rejects is rejected by the kernel's static_asserts too.
#include <catch2/catch.hpp>

#include "device/arch_limits.hpp"
#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;
using runtime::TargetArch;

namespace {

// CTAs of one config an H200 SM holds: registers (allocated per warp in units of 8 per thread), shared
// memory (228 KiB per SM, 1 KiB of it reserved per CTA) and threads (2048).
int ctas_per_sm(int registers, unsigned threads, std::size_t dynamic_shared_bytes) {
  constexpr int kRegistersPerSm = 65536, kThreadsPerSm = 2048;
  constexpr std::size_t kSharedPerSm = 228 * 1024, kReservedPerCta = 1024;
  int const per_thread = (registers + 7) / 8 * 8;
  int const by_registers = kRegistersPerSm / (per_thread * int(threads));
  int const by_shared = int(kSharedPerSm / (dynamic_shared_bytes + kReservedPerCta));
  return std::min({by_registers, by_shared, kThreadsPerSm / int(threads)});
}

// Compiles `configs` of problem p in one NVRTC program; every one spill-free, its resources reported.
void check_configs(Fa1Family const& f, std::vector<Config> const& configs, Problem const& p,
                   int min_ctas_per_sm) {
  REQUIRE_FALSE(configs.empty());
  auto request =
      device::make_family_request(f, configs.front(), p, {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE(request);
  request->name_expressions.clear();
  for (auto const& c : configs) request->name_expressions.push_back(f.name_expressions(c, p).front());
  auto const program = runtime::compile(request.value());
  INFO((program.ok() ? std::string() : program.error().log));
  REQUIRE(program);
  for (auto const& c : configs) {
    auto const name = f.name_expressions(c, p).front();
    auto const* r = program->resources_of(name);
    REQUIRE(r);
    auto const launch = f.launches(c, p).front();
    int const ctas = ctas_per_sm(r->registers, launch.block.x, launch.dynamic_shared_bytes);
    INFO(name << ": " << r->registers << " registers, " << r->spill_store_bytes << "+" << r->spill_load_bytes
              << " spill bytes, " << launch.dynamic_shared_bytes / 1024 << " KiB shared, " << ctas
              << " CTAs/SM");
    CHECK_FALSE(r->spills());
    CHECK(r->registers <= 255);
    CHECK(ctas >= min_ctas_per_sm);
  }
}

}  // namespace

TEST_CASE("fa1: every config of the space compiles for sm_90a without spills", "[kernels][nvrtc]") {
  Fa1Family const f;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true}) {
      auto const p = test::compile_problem(d, causal, Precision::bf16);
      INFO("d" << d << (causal ? " causal" : " full"));
      check_configs(f, enumerate_space(f, p), p, 1);
    }
}

TEST_CASE("fa1: the defaults of every dtype compile without spills and fit two CTAs per SM",
          "[kernels][nvrtc]") {
  Fa1Family const f;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto dtype : {Precision::fp16, Precision::bf16}) {
        auto const p = test::compile_problem(d, causal, dtype);
        INFO("d" << d << (causal ? " causal " : " full ") << common::name(dtype));
        check_configs(f, {f.default_config(p)}, p, 2);
      }
}

TEST_CASE("fa1: a config the host rejects is rejected by the kernel's static_asserts too",
          "[kernels][nvrtc]") {
  Fa1Family const f;
  auto const p = test::compile_problem(128, false, Precision::bf16);
  auto c = f.default_config(p);
  c["kChunkN"] = 48;  // 128 keys are not whole 48-key chunks
  REQUIRE(f.violates(c, p));
  auto const program = device::compile_family_config(f, c, p, {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE_FALSE(program);
  CHECK(program.error().log.find("fa1_config.h rejects") != std::string::npos);
  // The register budget, once a host-only rule, is the kernel's too (one violation() for both).
  c = f.default_config(p);
  c["kChunkN"] = 64;
  c["kNWarps"] = 4;  // 2 row tiles x (16 + 8) x 4 = 192 accumulators > 160
  c["kBlockM"] = 128;
  REQUIRE(f.violates(c, p));
  auto const over = device::compile_family_config(f, c, p, {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE_FALSE(over);
  CHECK(over.error().log.find("fa1_config.h rejects") != std::string::npos);
}
