// fa-mutate --target gpu from the command line: a wrong family, dtype or head dim is exit 2 with one line on
// any machine (checked before the GPU is looked for); without a GPU the run is exit 3 with the driver's
// one-line reason; with one, a one-mutant campaign runs and passes.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/exit_codes.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/tool_process.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fa_mutate() {
  return fl::test::sibling_binary("fa-mutate");
}

fs::path output_file() {
  return fs::temp_directory_path() / ("fl_fa_mutate_gpu_" + std::to_string(::getpid()) + ".txt");
}

int exit_code(std::string const& args) {
  return fl::test::shell_exit_code(fa_mutate().string() + " " + args + " > " + output_file().string() +
                                   " 2>&1");
}

std::string output() {
  return fl::test::read_text(output_file());
}

}  // namespace

TEST_CASE("fa-mutate --target gpu refuses a bad family, dtype or head dim with exit code 2",
          "[mutants][cli]") {
  REQUIRE(fs::exists(fa_mutate()));
  CHECK(exit_code("--target gpu --family fa2") == fl::common::kExitBadInput);
  CHECK(output().find("--family fa2: allowed for --target gpu: ") != std::string::npos);
  CHECK(output().find("fa2_sm80") != std::string::npos);
  CHECK(output().find("fa1") != std::string::npos);  // found from its switches, nothing family-specific
  CHECK(exit_code("--target gpu --dtype fp8_e4m3") == fl::common::kExitBadInput);
  CHECK(output().find("--family fa2_sm80 runs none of the dtypes fp8_e4m3") != std::string::npos);
  CHECK(exit_code("--target gpu --family fa2_sm80,fa1 --dtype fp8_e4m3") == fl::common::kExitBadInput);
  CHECK(exit_code("--target gpu --head-dim 16") == fl::common::kExitBadInput);
  CHECK(output().find("head dims 64, 128, 256") != std::string::npos);
  fs::remove(output_file());
}

TEST_CASE(
    "fa-mutate refuses a sanitizer that is not an executable file, and a racecheck timeout out of range",
    "[mutants][cli][racecheck]") {
  REQUIRE(fs::exists(fa_mutate()));
  CHECK(exit_code("--target gpu --compute-sanitizer /nonexistent/compute-sanitizer") ==
        fl::common::kExitBadInput);
  CHECK(output() ==
        "fa-mutate: --compute-sanitizer /nonexistent/compute-sanitizer: not an executable file (give "
        "compute-sanitizer's path, or none)\n");
  CHECK(exit_code("--target gpu --racecheck-timeout 0") == fl::common::kExitBadInput);
  CHECK(output() == "fa-mutate: --racecheck-timeout 0: allowed 1..3600 seconds\n");
  CHECK(exit_code("--target gpu --racecheck-probe bwd-race --dtype bf16,fp16 --family fa2_sm80") ==
        fl::common::kExitBadInput);
  CHECK(output().find("--racecheck-probe runs one mutant of one --family in one --dtype") !=
        std::string::npos);
  CHECK(exit_code("--help") == 0);
  CHECK(output().find("--compute-sanitizer") != std::string::npos);
  CHECK(output().find("--racecheck-probe") == std::string::npos);  // the child's mode stays out of --help
  fs::remove(output_file());
}

TEST_CASE("fa-mutate --target gpu exits 3 without a GPU and runs a campaign with one", "[mutants][cli]") {
  REQUIRE(fs::exists(fa_mutate()));
  int const rc = exit_code("--target gpu --mutant unrescaled-o --seqlen 100");
  std::string const out = output();
  INFO(out);
  if (auto const no_gpu = fl::test::gpu_unavailable_reason()) {
    CHECK(rc == fl::common::kExitNoGpu);
    CHECK(out.rfind("fa-mutate: no CUDA", 0) == 0);
    CHECK(std::count(out.begin(), out.end(), '\n') == 1);  // one line
  } else {
    CHECK(rc == 0);
    CHECK(out.find("unrescaled-o") != std::string::npos);
  }
  fs::remove(output_file());
}
