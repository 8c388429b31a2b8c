#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include "db/schema.hpp"
#include "device/compile/compile_service.hpp"
#include "runtime/kernel_source.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"

using namespace fl;

namespace {

// A two-file family: the kernel includes a header, so editing the header must change the cache key.
void write_family(test::TempKernelsDir const& dir, std::string const& header_value) {
  dir.write("scale.cuh", "#pragma once\nconstexpr float kFactor = " + header_value + ";\n");
  dir.write("scale.cu",
            "#include \"scale.cuh\"\n"
            "template <int kUnroll> __global__ void scale(float* x, int n) {\n"
            "  int i = (blockIdx.x * blockDim.x + threadIdx.x) * kUnroll;\n"
            "  for (int k = 0; k < kUnroll; ++k) if (i + k < n) x[i + k] *= kFactor * FA_BIAS;\n"
            "}\n");
}

struct Fixture {
  test::TempKernelsDir dir;
  std::filesystem::path db_path = dir.path() / "cache.sqlite";
  device::CompileService service() { return device::CompileService(db_path); }
  // What a run would compile now: the sources as they are on disk at this moment.
  runtime::CompileRequest unit() const {
    auto source = runtime::load_kernel_source("scale.cu", dir.path());
    REQUIRE(source.ok());
    auto request = runtime::make_compile_request(source.value(), runtime::TargetArch::sm_90a);
    request.defines = {{"FA_BIAS", "2.0f"}};
    request.name_expressions = {"scale<4>"};
    return request;
  }
};

}  // namespace

TEST_CASE("compile service: miss compiles and stores, hit is answered from SQLite", "[device][compile]") {
  Fixture f;
  write_family(f.dir, "1.0f");
  auto service = f.service();
  auto first = service.compile(f.unit());
  REQUIRE(first.ok());
  CHECK_FALSE(first->from_cache);
  CHECK_FALSE(first->program.cubin.empty());
  CHECK_FALSE(first->program.lowered_name("scale<4>").empty());

  // Best of five look-ups: one slow look-up on a loaded 2-core machine must not fail the test.
  double best_hit_ms = 1e9;
  for (int i = 0; i < 5; ++i) {
    auto hit = service.compile(f.unit());
    REQUIRE(hit.ok());
    REQUIRE(hit->from_cache);
    CHECK(hit->program.cubin == first->program.cubin);
    CHECK(hit->program.lowered_names == first->program.lowered_names);
    CHECK(hit->program.resources.entries().size() == first->program.resources.entries().size());
    best_hit_ms = std::min(best_hit_ms, hit->elapsed_ms);
  }
  INFO("compile " << first->program.compile_ms << " ms, best hit " << best_hit_ms << " ms");
  CHECK(best_hit_ms * 50.0 < first->program.compile_ms);  // issue 2: a hit is at least 50x faster
}

TEST_CASE("compile service: editing an included kernels_src file invalidates the entry",
          "[device][compile]") {
  Fixture f;
  write_family(f.dir, "1.0f");
  auto first = f.service().compile(f.unit());
  REQUIRE(first.ok());
  write_family(f.dir, "3.0f");  // a new run (new SourceSet) reads the edited header
  auto second = f.service().compile(f.unit());
  REQUIRE(second.ok());
  CHECK_FALSE(second->from_cache);
  CHECK(second->cache_key != first->cache_key);
  write_family(f.dir, "1.0f");  // back to the original text: the original entry answers again
  auto third = f.service().compile(f.unit());
  REQUIRE(third.ok());
  CHECK(third->from_cache);
  CHECK(third->cache_key == first->cache_key);
}

TEST_CASE("compile service: a corrupt cached CUBIN is recompiled and replaced", "[device][compile]") {
  Fixture f;
  write_family(f.dir, "1.0f");
  auto first = f.service().compile(f.unit());
  REQUIRE(first.ok());
  {
    auto database = db::open_database(f.db_path);
    database.execute("UPDATE compile_cache SET cubin = substr(cubin, 1, 100)");  // truncate the blob
  }
  auto second = f.service().compile(f.unit());
  REQUIRE(second.ok());
  CHECK_FALSE(second->from_cache);
  CHECK_FALSE(second->cache_note.empty());
  CHECK(second->program.cubin == first->program.cubin);
  auto third = f.service().compile(f.unit());
  REQUIRE(third.ok());
  CHECK(third->from_cache);
}

TEST_CASE("compile service: a compile error is a failed stage with the NVRTC log, and is not cached",
          "[device][compile]") {
  Fixture f;
  f.dir.write("scale.cu", "template <int k> __global__ void scale(float* x, int n) { x[0] = k }\n");
  auto result = f.service().compile(f.unit());
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().stage == "compile");
  CHECK(result.error().log.find("error") != std::string::npos);
  auto database = db::open_database(f.db_path);
  auto count = database.prepare("SELECT count(*) FROM compile_cache");
  REQUIRE(count.step());
  CHECK(count.column_int64(0) == 0);
}
