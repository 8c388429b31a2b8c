#include "runtime/kernel_source.hpp"

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "common/sha256.hpp"

#include "tests/runtime/temp_kernels_dir.hpp"

namespace fs = std::filesystem;
using fl::runtime::load_kernel_source;
using fl::test::TempKernelsDir;

TEST_CASE("quoted includes are followed recursively and hashed", "[source]") {
  TempKernelsDir dir;
  dir.write("family.cu", "#include \"common/softmax.cuh\"\n#include <cuda_fp16.h>\n__global__ void k() {}\n");
  dir.write("common/softmax.cuh", "#pragma once\n#include \"mask.cuh\"\n// #include \"commented_out.cuh\"\n");
  dir.write("common/mask.cuh", "#pragma once\n  #  include \"../tiles.cuh\"\n");
  dir.write("tiles.cuh", "#pragma once\n#include \"common/mask.cuh\"\n");  // a cycle ends
  dir.write("unused.cuh", "not included\n");

  auto source = load_kernel_source("family.cu", dir.path());
  REQUIRE(source.ok());
  CHECK(source->main.path == "family.cu");
  REQUIRE(source->includes.size() == 3);
  CHECK(source->includes[0].path == "common/mask.cuh");
  CHECK(source->includes[1].path == "common/softmax.cuh");
  CHECK(source->includes[2].path == "tiles.cuh");
  // mask.cuh is reached as "mask.cuh" (next to softmax.cuh) and as "common/mask.cuh" (from the root):
  // NVRTC matches in-memory headers by spelling, so both must be known.
  auto const& spellings = source->includes[0].spellings;
  CHECK(spellings.size() == 2);
  CHECK(std::find(spellings.begin(), spellings.end(), "mask.cuh") != spellings.end());
  CHECK(std::find(spellings.begin(), spellings.end(), "common/mask.cuh") != spellings.end());
  CHECK(source->includes[2].sha256 == fl::common::sha256_hex("#pragma once\n#include \"common/mask.cuh\"\n"));
}

TEST_CASE("changing an included file changes its hash and nothing else", "[source]") {
  TempKernelsDir dir;
  dir.write("family.cu", "#include \"a.cuh\"\n#include \"b.cuh\"\n");
  dir.write("a.cuh", "#define A 1\n");
  dir.write("b.cuh", "#define B 1\n");
  auto before = load_kernel_source("family.cu", dir.path());
  dir.write("b.cuh", "#define B 2\n");
  auto after = load_kernel_source("family.cu", dir.path());
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  CHECK(before->main.sha256 == after->main.sha256);
  CHECK(before->includes[0].sha256 == after->includes[0].sha256);
  CHECK(before->includes[1].sha256 != after->includes[1].sha256);
  CHECK(after->includes[1].text == "#define B 2\n");
}

TEST_CASE("kernel sources that cannot be trusted are errors", "[source]") {
  TempKernelsDir dir;
  SECTION("a missing main file") {
    auto source = load_kernel_source("absent.cu", dir.path());
    REQUIRE_FALSE(source.ok());
    CHECK(source.error().stage == "source");
    CHECK(source.error().message.find("absent.cu") != std::string::npos);
  }
  SECTION("an include that leaves kernels_src") {
    dir.write("outside.cuh", "#define OUTSIDE 1\n");
    dir.write("kernels_src/family.cu", "#include \"../outside.cuh\"\n");
    auto source = load_kernel_source("family.cu", dir.path() / "kernels_src");
    REQUIRE_FALSE(source.ok());
    CHECK(source.error().message.find("leaves") != std::string::npos);
  }
  SECTION("one spelling naming two files") {
    dir.write("family.cu", "#include \"util.cuh\"\n#include \"sub/x.cuh\"\n");
    dir.write("util.cuh", "#define U 1\n");
    dir.write("sub/x.cuh", "#include \"util.cuh\"\n");
    dir.write("sub/util.cuh", "#define U 2\n");
    auto source = load_kernel_source("family.cu", dir.path());
    REQUIRE_FALSE(source.ok());
    CHECK(source.error().message.find("names both") != std::string::npos);
  }
}

TEST_CASE("the kernels dir resolves from the explicit dir, then FA_KERNELS_DIR, then the build tree",
          "[source]") {
  TempKernelsDir dir;
  auto explicit_dir = fl::runtime::resolve_kernels_dir(dir.path());
  REQUIRE(explicit_dir.ok());
  CHECK(explicit_dir.value() == fs::absolute(dir.path()).lexically_normal());
  CHECK_FALSE(fl::runtime::resolve_kernels_dir(dir.path() / "missing").ok());

  setenv(fl::runtime::kKernelsDirEnv, dir.path().c_str(), 1);
  auto from_env = fl::runtime::resolve_kernels_dir();
  unsetenv(fl::runtime::kKernelsDirEnv);
  REQUIRE(from_env.ok());
  CHECK(from_env.value() == fs::absolute(dir.path()).lexically_normal());

  auto fallback = fl::runtime::resolve_kernels_dir();  // the repo's kernels_src, which has smoke.cu
  REQUIRE(fallback.ok());
  CHECK(fs::exists(fallback.value() / "smoke.cu"));
}
