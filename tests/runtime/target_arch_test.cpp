#include "runtime/target_arch.hpp"

#include <catch2/catch.hpp>

using fl::runtime::TargetArch;

TEST_CASE("target architectures parse in their usual spellings", "[arch]") {
  CHECK(fl::runtime::parse_target_arch("sm_80").value() == TargetArch::sm_80);
  CHECK(fl::runtime::parse_target_arch("sm89").value() == TargetArch::sm_89);
  CHECK(fl::runtime::parse_target_arch("SM_90").value() == TargetArch::sm_90);
  CHECK(fl::runtime::parse_target_arch("90a").value() == TargetArch::sm_90a);
  CHECK(fl::runtime::arch_name(TargetArch::sm_90a) == "sm_90a");
  CHECK(fl::runtime::arch_compute_capability(TargetArch::sm_89) == 89);
}

TEST_CASE("an unknown target architecture is rejected naming the value and the allowed ones", "[arch]") {
  for (char const* bad : {"sm_95", "sm_86", "compute_90", "", "sm_90b"}) {
    auto parsed = fl::runtime::parse_target_arch(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message ==
          "unknown target architecture '" + std::string(bad) + "' (allowed: sm_80, sm_89, sm_90, sm_90a)");
  }
}

TEST_CASE("the target for a device runs on it", "[arch]") {
  CHECK(fl::runtime::arch_for_device(9, 0).value() == TargetArch::sm_90a);
  CHECK(fl::runtime::arch_for_device(8, 9).value() == TargetArch::sm_89);
  CHECK(fl::runtime::arch_for_device(8, 6).value() == TargetArch::sm_80);
  CHECK_FALSE(fl::runtime::arch_for_device(7, 5).ok());
  CHECK_FALSE(fl::runtime::arch_for_device(10, 0).ok());
}
