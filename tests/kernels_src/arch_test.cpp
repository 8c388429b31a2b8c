// The warp size and the shared-memory limit are written once, in kernels_src/fa_arch.h: NVRTC compiles it
// to the values the host was built with (device/arch_limits.hpp includes it), and no other kernel
// file writes the limit again.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "device/arch_limits.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;

namespace {

// A probe that static_asserts fa_arch.h's values equal the given host values, compiled by NVRTC.
runtime::Result<runtime::CompiledProgram> compile_probe(long warp_size, long shared_bytes) {
  runtime::CompileRequest request;
  request.program_name = "arch_probe.cu";
  request.source =
      "#include \"fa_arch.h\"\n"
      "static_assert(fa::kWarpSize == FL_HOST_WARP_SIZE, \"warp size: kernels and host disagree\");\n"
      "static_assert(fa::kMaxSharedBytesPerBlock == FL_HOST_SHARED_BYTES, \"shared limit: kernels and host "
      "disagree\");\n"
      "__global__ void arch_probe() {}\n";
  request.kernels_include_dir = test::kernels_dir();
  request.defines["FL_HOST_WARP_SIZE"] = std::to_string(warp_size);
  request.defines["FL_HOST_SHARED_BYTES"] = std::to_string(shared_bytes);
  request.arch = runtime::TargetArch::sm_80;
  return runtime::compile(request);
}

}  // namespace

TEST_CASE("NVRTC sees the warp size and shared-memory limit the host computes with", "[kernels][nvrtc]") {
  auto const agreed = compile_probe(device::kWarpSize, static_cast<long>(device::kFamilyMaxSharedBytes));
  INFO((agreed ? std::string() : agreed.error().log));
  CHECK(agreed.ok());
  auto const other_warp =
      compile_probe(device::kWarpSize * 2, static_cast<long>(device::kFamilyMaxSharedBytes));
  REQUIRE_FALSE(other_warp.ok());
  CHECK(other_warp.error().log.find("warp size: kernels and host disagree") != std::string::npos);
  auto const other_limit =
      compile_probe(device::kWarpSize, static_cast<long>(device::kFamilyMaxSharedBytes) + 1);
  REQUIRE_FALSE(other_limit.ok());
  CHECK(other_limit.error().log.find("shared limit: kernels and host disagree") != std::string::npos);
}

TEST_CASE("no kernel file but fa_arch.h writes the shared-memory limit", "[kernels]") {
  // Every family's config header reads it from fa_arch.h (fa3_sm90_config.h and flash_decode_config.h as
  // fa::kMaxSharedBytesPerBlock).
  for (auto const& entry : std::filesystem::directory_iterator(test::kernels_dir())) {
    auto const name = entry.path().filename().string();
    if (name == "fa_arch.h" || !entry.is_regular_file()) continue;
    INFO(name);
    CHECK(test::kernel_file_text(name).find("227 * 1024") == std::string::npos);
  }
}
