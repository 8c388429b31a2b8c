#include "runtime/compile_request.hpp"

#include <catch2/catch.hpp>

#include <string>

#include "common/sha256.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"

using fl::runtime::cache_key_material;
using fl::runtime::CompileRequest;
using fl::runtime::TargetArch;

namespace {

CompileRequest base_request(fl::test::TempKernelsDir const& dir) {
  auto source = fl::runtime::load_kernel_source("family.cu", dir.path());
  auto request = fl::runtime::make_compile_request(source.value(), TargetArch::sm_90a);
  request.defines = {{"kBlockM", "128"}, {"kBlockN", "64"}};
  request.name_expressions = {"fwd<128>", "bwd<64>"};
  return request;
}

void write_family(fl::test::TempKernelsDir const& dir, std::string const& header_text) {
  dir.write("family.cu", "#include \"tile.cuh\"\n");
  dir.write("tile.cuh", header_text);
}

}  // namespace

TEST_CASE("the cache key names every input that can change the CUBIN", "[cache_key]") {
  fl::test::TempKernelsDir dir;
  write_family(dir, "#define TILE 1\n");
  auto const base = cache_key_material(base_request(dir));
  CHECK(base.sha256.size() == 64);
  CHECK(base.sha256 == fl::common::sha256_hex(base.canonical));
  CHECK(base.canonical.find("nvrtc=" + fl::runtime::nvrtc_version()) != std::string::npos);
  CHECK(base.canonical.find("arch=sm_90a") != std::string::npos);
  CHECK(base.canonical.find("option=-DkBlockM=128") != std::string::npos);
  CHECK(base.canonical.find("name_expression=fwd<128>") != std::string::npos);
  CHECK(base.canonical.find("header=tile.cuh ") != std::string::npos);

  SECTION("same inputs, same key; name expression order does not matter") {
    auto request = base_request(dir);
    std::swap(request.name_expressions[0], request.name_expressions[1]);
    CHECK(cache_key_material(request).sha256 == base.sha256);
  }
  SECTION("an included file's text") {
    write_family(dir, "#define TILE 2\n");
    CHECK(cache_key_material(base_request(dir)).sha256 != base.sha256);
  }
  SECTION("a define") {
    auto request = base_request(dir);
    request.defines["FA_MUTANT_SKIP_RESCALE"] = "1";
    CHECK(cache_key_material(request).sha256 != base.sha256);
  }
  SECTION("the architecture") {
    auto request = base_request(dir);
    request.arch = TargetArch::sm_90;
    CHECK(cache_key_material(request).sha256 != base.sha256);
  }
  SECTION("extra options and line info") {
    auto request = base_request(dir);
    request.extra_options = {"--maxrregcount=128"};
    CHECK(cache_key_material(request).sha256 != base.sha256);
    auto with_lines = base_request(dir);
    with_lines.line_info = true;
    CHECK(cache_key_material(with_lines).sha256 != base.sha256);
  }
  SECTION("a name expression") {
    auto request = base_request(dir);
    request.name_expressions.push_back("fwd<64>");
    CHECK(cache_key_material(request).sha256 != base.sha256);
  }
  SECTION("not where kernels_src lives") {
    fl::test::TempKernelsDir elsewhere;
    write_family(elsewhere, "#define TILE 1\n");
    auto request = base_request(elsewhere);
    request.kernels_include_dir = elsewhere.path();
    CHECK(cache_key_material(request).sha256 == base.sha256);
  }
}
