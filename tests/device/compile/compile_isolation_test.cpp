// NVRTC in a worker process (runtime/compile_worker.hpp through device::CompileService): a compiler crash or
// hang is that program's failure, stored, and never tried again; a normal compile gives what the in-process
// compile gives. The crashing compiler is tests/support/crashing_compile_worker.cpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "db/compile_failures.hpp"
#include "db/schema.hpp"
#include "device/compile/compile_service.hpp"
#include "runtime/kernel_source.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tests/tool_process.hpp"

using namespace fl;

namespace {

struct Fixture {
  test::TempKernelsDir dir;
  std::filesystem::path db_path = dir.path() / "cache.sqlite";
  std::filesystem::path worker_log = dir.path() / "worker.log";
  Fixture() {
    dir.write("axpy.cu",
              "template <int kUnroll> __global__ void axpy(float a, float* x, int n) {\n"
              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "  if (i < n) x[i] = a * x[i] + FA_BIAS;\n"
              "}\n");
    setenv("FL_TEST_WORKER_LOG", worker_log.c_str(), 1);
  }
  ~Fixture() { unsetenv("FL_TEST_WORKER_LOG"); }
  runtime::CompileRequest request(std::string const& extra_define) const {
    auto source = runtime::load_kernel_source("axpy.cu", dir.path());
    REQUIRE(source.ok());
    auto request = runtime::make_compile_request(source.value(), runtime::TargetArch::sm_90a);
    request.defines = {{"FA_BIAS", "1.0f"}};
    if (!extra_define.empty()) request.defines[extra_define] = "1";
    request.name_expressions = {"axpy<2>"};
    return request;
  }
  device::CompileService crashing(std::chrono::milliseconds timeout = std::chrono::seconds(60)) const {
    return device::CompileService(db_path, {test::sibling_binary("test_crashing_compile_worker"), timeout});
  }
  int worker_starts() const {
    std::ifstream in(worker_log);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
};

}  // namespace

TEST_CASE("a compiler crash is that program's failure, with the signal, stored and never retried",
          "[device][compile]") {
  Fixture f;
  auto service = f.crashing();
  auto const crashed = service.compile(f.request("FL_TEST_RAISE_SIGSEGV"));
  REQUIRE_FALSE(crashed.ok());
  CHECK(crashed.error().stage == "compile");
  CHECK_THAT(crashed.error().message, Catch::Contains("signal 11 (SIGSEGV)"));
  CHECK(f.worker_starts() == 1);

  // The caller is alive, and the next program compiles through a fresh worker.
  auto const fine = service.compile(f.request(""));
  REQUIRE(fine.ok());
  CHECK_FALSE(fine->program.cubin.empty());
  CHECK(f.worker_starts() == 2);

  // The same request again, in a new service (a rerun): answered from the database, no worker started.
  auto rerun = f.crashing();
  auto const again = rerun.compile(f.request("FL_TEST_RAISE_SIGSEGV"));
  REQUIRE_FALSE(again.ok());
  CHECK_THAT(again.error().message, Catch::Contains("SIGSEGV") && Catch::Contains("not retried"));
  CHECK(f.worker_starts() == 2);
}

TEST_CASE("a compile that hangs past the timeout is killed and recorded", "[device][compile]") {
  Fixture f;
  auto service = f.crashing(std::chrono::milliseconds(1500));
  auto const started = std::chrono::steady_clock::now();
  auto const hung = service.compile(f.request("FL_TEST_HANG"));
  auto const took = std::chrono::steady_clock::now() - started;
  REQUIRE_FALSE(hung.ok());
  CHECK_THAT(hung.error().message, Catch::Contains("did not finish within 1.5 s"));
  CHECK(took < std::chrono::seconds(10));
  auto database = db::open_database(f.db_path);
  auto const key = runtime::cache_key_material(f.request("FL_TEST_HANG")).sha256;
  auto const stored = db::find_compile_failure(database, key);
  REQUIRE(stored);
  CHECK_THAT(stored->message, Catch::Contains("killed"));
}

TEST_CASE("the compile worker gives what the in-process compile gives", "[device][compile]") {
  Fixture f;
  auto const request = f.request("");
  auto const in_process = runtime::compile(request);
  REQUIRE(in_process.ok());
  auto const isolated = runtime::compile_in_worker(
      request, {test::sibling_binary("fa-compile-worker"), std::chrono::seconds(60)});
  REQUIRE(isolated.result.ok());
  CHECK_FALSE(isolated.worker_died);
  auto const& a = in_process.value();
  auto const& b = isolated.result.value();
  CHECK(a.cubin == b.cubin);
  CHECK_THAT(b.log, Catch::Contains("Used"));  // the ptxas report (its compile time differs run to run)
  CHECK(a.lowered_names == b.lowered_names);
  CHECK(a.options == b.options);
  CHECK(a.nvrtc_version == b.nvrtc_version);
  REQUIRE(b.resources_of("axpy<2>"));
  CHECK(b.resources_of("axpy<2>")->registers == a.resources_of("axpy<2>")->registers);

  // A compile error travels back as the error it is (stage, NVRTC's line), not as a dead worker.
  auto broken = request;
  broken.source += "\nthis is not C++;\n";
  auto const failed = runtime::compile_in_worker(
      broken, {test::sibling_binary("fa-compile-worker"), std::chrono::seconds(60)});
  REQUIRE_FALSE(failed.result.ok());
  CHECK_FALSE(failed.worker_died);
  CHECK(failed.result.error().stage == "compile");
  CHECK_THAT(failed.result.error().message, Catch::Contains("error"));
}

TEST_CASE("the wire format round-trips a request", "[device][compile]") {
  Fixture f;
  auto request = f.request("FA_EXTRA");
  request.extra_options = {"--maxrregcount=128"};
  request.line_info = true;
  auto const decoded = runtime::decode_request(runtime::encode_request(request));
  REQUIRE(decoded.ok());
  CHECK(runtime::cache_key_material(decoded.value()).canonical ==
        runtime::cache_key_material(request).canonical);
  CHECK_FALSE(runtime::decode_request("garbage").ok());
}
