// naive under NVRTC on this machine (no GPU needed): every config of its space (bf16, both masks, head
// dims 64, 128, 256) with each kScoreBits (a precision option, not searched: the space holds 32) and the
// fp16 defaults compile for sm_90a without spills, within the registers
// and the shared memory naive_config.h plans for, and a config the host rejects is rejected by the kernels'
// own static_asserts too.
#include <catch2/catch.hpp>

#include <set>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/kernels_src/compile_checks.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;
using runtime::TargetArch;

namespace {}  // namespace

// One program per head dim holding every distinct kernel of the space and of its 16-bit S twins (a
// config's three kernels are shared with many others: 3 x 2 softmax instances, 8 S and 4 O GEMMs per mask
// at d 128).
TEST_CASE("every naive config compiles for sm_90a without spills", "[kernels][nvrtc]") {
  NaiveFamily const f;
  for (int d : {64, 128, 256}) {
    DYNAMIC_SECTION("d" << d) {
      std::set<std::string> names;
      std::size_t configs = 0;
      for (bool causal : {false, true}) {
        auto const p = test::compile_problem(d, causal, Precision::bf16);
        for (auto config : enumerate_space(f, p))
          for (int bits : {32, 16}) {
            config["kScoreBits"] = bits;
            if (f.violates(config, p)) continue;
            ++configs;
            for (auto const& name : f.name_expressions(config, p)) names.insert(name);
          }
        auto const fp16 = test::compile_problem(d, causal, Precision::fp16);
        for (auto const& name : f.name_expressions(f.default_config(fp16), fp16)) names.insert(name);
      }
      INFO("d" << d << ": " << configs << " configs, " << names.size() << " kernels");
      REQUIRE(configs > 0);
      auto const first = test::compile_problem(d, false, Precision::bf16);
      auto request = device::make_family_request(f, f.default_config(first), first,
                                                 {TargetArch::sm_90a, test::kernels_dir(), {}});
      REQUIRE(request);
      request->name_expressions.assign(names.begin(), names.end());
      auto const program = test::compiles_spill_free(request.value());
      for (auto const& name : names) {
        auto const* r = program.resources_of(name);
        REQUIRE(r);
        UNSCOPED_INFO(name << ": " << r->registers << " registers, " << r->shared_bytes << " static smem");
        CHECK(r->registers <= 255);
      }
    }
  }
}

TEST_CASE("a naive config the host rejects does not compile", "[kernels][nvrtc]") {
  NaiveFamily const f;
  auto const p = test::compile_problem(256, false, Precision::bf16);
  auto bad = f.default_config(p);
  bad["kNWarps"] = 4;  // O = P V at d 256 would hold 256 accumulators per thread
  REQUIRE(f.violates(bad, p));
  auto const program =
      device::compile_family_config(f, bad, p, {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE_FALSE(program);
  CHECK_THAT(program.error().log, Catch::Contains("naive_config.h rejects"));
}
