// naive and fa1 under NVRTC (no GPU needed): default configs compile for sm_80 and sm_90a without spills.
#include <catch2/catch.hpp>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;

TEST_CASE("naive and fa1 default configs compile without spills", "[kernels][nvrtc]") {
  NaiveFamily const naive;
  Fa1Family const fa1;
  for (Family const* f : {static_cast<Family const*>(&naive), static_cast<Family const*>(&fa1)})
    for (auto arch : {runtime::TargetArch::sm_80, runtime::TargetArch::sm_90a}) {
      auto const p = headline_problem(1024, 128, true, Precision::fp16, Direction::forward);
      auto const program =
          device::compile_family_config(*f, f->default_config(p), p, {arch, test::kernels_dir(), {}});
      INFO(f->name() << " " << runtime::arch_name(arch)
                     << (program.ok() ? std::string() : program.error().log));
      REQUIRE(program);
      for (auto const& name : f->name_expressions(f->default_config(p), p)) {
        auto const* r = program->resources_of(name);
        REQUIRE(r);
        CHECK_FALSE(r->spills());
      }
    }
}
