#include "runtime/ptxas_report.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

using fl::runtime::parse_ptxas_report;

namespace {

// Logs captured from NVRTC 13.0 with --ptxas-options=--verbose (sources: data/ptxas_capture_kernels.cu
// and kernels_src/smoke.cu; data/README.md says how).
std::string captured(std::string const& name) {
  std::ifstream in(std::string(FA_TEST_DATA_DIR) + "/" + name);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("ptxas report: several functions with spills, smem, cmem and a device function (sm_80)",
          "[ptxas]") {
  auto const report = parse_ptxas_report(captured("ptxas_cuda13_sm80_maxrreg32.log"));
  REQUIRE(report.functions.size() == 6);
  CHECK(report.entries().size() == 5);

  auto const* spill = report.find("_ZN2ns5spillILi64EEEvPKfPfi");
  REQUIRE(spill != nullptr);
  CHECK(spill->is_entry);
  CHECK(spill->registers == 32);
  CHECK(spill->stack_frame_bytes == 976);
  CHECK(spill->spill_store_bytes == 1428);
  CHECK(spill->spill_load_bytes == 1428);
  CHECK(spill->spills());
  CHECK(spill->constant_bytes == 372);
  CHECK(spill->shared_bytes == 0);

  auto const* smem = report.find("_ZN2ns4smemEPf");
  REQUIRE(smem != nullptr);
  CHECK(smem->registers == 10);
  CHECK(smem->barriers == 1);
  CHECK(smem->shared_bytes == 8192);
  CHECK_FALSE(smem->spills());

  auto const* helper = report.find("_Z6helperPKfi");  // __noinline__ __device__: properties only
  REQUIRE(helper != nullptr);
  CHECK_FALSE(helper->is_entry);
  CHECK(helper->registers == 0);

  auto const* caller = report.find("_Z6callerPKfPf");
  REQUIRE(caller != nullptr);
  CHECK(caller->stack_frame_bytes == 32);
  CHECK(caller->registers == 17);

  auto const* plain = report.find("plain");  // extern "C": unmangled
  REQUIRE(plain != nullptr);
  CHECK(plain->registers == 8);
  CHECK(report.find("ns::spill<64>") == nullptr);  // looked up by mangled name only
}

TEST_CASE("ptxas report: sm_90a prints no cmem", "[ptxas]") {
  auto const report = parse_ptxas_report(captured("ptxas_cuda13_sm90a_maxrreg32.log"));
  REQUIRE(report.functions.size() == 6);
  auto const* spill = report.find("_ZN2ns5spillILi64EEEvPKfPfi");
  REQUIRE(spill != nullptr);
  CHECK(spill->spill_store_bytes == 1600);
  CHECK(spill->spill_load_bytes == 1600);
  CHECK(spill->stack_frame_bytes == 1040);
  CHECK(spill->constant_bytes == 0);
  CHECK(report.find("_ZN2ns4smemEPf")->registers == 12);
}

TEST_CASE("ptxas report: no spills and several cmem banks (smoke kernels, sm_89)", "[ptxas]") {
  auto const report = parse_ptxas_report(captured("ptxas_cuda13_sm89_smoke.log"));
  REQUIRE(report.functions.size() == 2);
  for (auto const& f : report.functions) {
    CHECK(f.is_entry);
    CHECK_FALSE(f.spills());
    CHECK(f.stack_frame_bytes == 0);
  }
  auto const* reverse = report.find("_ZN2fl5smoke13chunk_reverseEPKfPfi");
  REQUIRE(reverse != nullptr);
  CHECK(reverse->registers == 40);
  CHECK(reverse->barriers == 1);
  CHECK(reverse->constant_bytes == 372 + 8);  // cmem[0] + cmem[2]
}

TEST_CASE("ptxas report: the older nvcc layout (bare stack line, no barriers, properties first)", "[ptxas]") {
  // The layout of CUDA 11-era `nvcc -Xptxas -v`: written out by hand, since no such toolkit is here.
  std::string const log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for _Z3fwdILi128EEvPf\n"
      "    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Compiling entry function '_Z3fwdILi128EEvPf' for 'sm_80'\n"
      "ptxas info    : Used 168 registers, 8192 bytes smem, 400 bytes cmem[0]\n";
  auto const report = parse_ptxas_report(log);
  REQUIRE(report.functions.size() == 1);
  auto const& f = report.functions.front();
  CHECK(f.function == "_Z3fwdILi128EEvPf");
  CHECK(f.is_entry);
  CHECK(f.registers == 168);
  CHECK(f.shared_bytes == 8192);
  CHECK(f.constant_bytes == 400);
  CHECK(f.stack_frame_bytes == 16);
  CHECK(f.spill_store_bytes == 8);
  CHECK(f.spill_load_bytes == 12);
}

TEST_CASE("ptxas report: a log without ptxas lines has no functions", "[ptxas]") {
  CHECK(parse_ptxas_report("").functions.empty());
  CHECK(parse_ptxas_report("smoke.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n")
            .functions.empty());
}
