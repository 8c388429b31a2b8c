// fa-bench --stability-study on the GPU ([gpu]): our kernels on the stability study's inputs and rows land
// where the CPU emulation of the same arithmetic does (fa2_sm80 beside the tiled emulator, naive beside
// standard attention), every kBlockN outside a family's space is reported as skipped, and the CSV has
// results.csv's columns so the experiment's tables merge both.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "device/families/registry.hpp"
#include "numerics/stability_study.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_source.hpp"
#include "tuner/run/stability_gpu_study.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;

namespace {

// rmse per (method, block_n) from one CSV.
std::map<std::pair<std::string, int>, double> rmse_by_method(std::string const& csv) {
  std::map<std::pair<std::string, int>, double> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) f.push_back(cell);
    REQUIRE(f.size() == 13u);
    out[{f[3], std::stoi(f[4])}] = std::stod(f[9]);
  }
  return out;
}

}  // namespace

TEST_CASE("the stability study on the GPU lands where the CPU emulation does", "[gpu][tuner]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  auto arch = runtime::arch_for_device(context->info().cc_major, context->info().cc_minor);
  REQUIRE(arch);
  auto const kernels_dir = runtime::resolve_kernels_dir();
  REQUIRE(kernels_dir);
  numerics::StabilityOptions o;
  o.seqlens = {512};
  o.block_ns = {16, 32, 64};
  o.precisions = {common::Precision::bf16};
  o.families = {numerics::InputFamily::normal};
  auto const cpu = numerics::run_stability_study(o);
  double cpu_tiled = 0, cpu_standard = 0;
  for (auto const& r : cpu)
    if (r.output == common::Precision::bf16) (r.method == "standard" ? cpu_standard : cpu_tiled) = r.rmse;
  device::CompileSpec const spec{arch.value(), kernels_dir.value(), {}};
  std::vector<std::string> skipped;
  auto fa2 = run_stability_gpu_study(*find_family("fa2_sm80"), spec, o, "test", [&](std::string const& line) {
    if (line[0] == '#') skipped.push_back(line);
  });
  REQUIRE(fa2);
  auto const fa2_rmse = rmse_by_method(fa2.value());
  CHECK(fa2_rmse.size() == 2u);  // kBlockN 32 and 64; 16 is not in fa2_sm80's space
  CHECK(skipped.size() == 1u);
  for (auto const& [key, rmse] : fa2_rmse) {
    INFO(key.first << " kBlockN " << key.second);
    CHECK(rmse < 2 * cpu_tiled);
    CHECK(rmse > cpu_tiled / 2);
  }
  auto naive = run_stability_gpu_study(*find_family("naive"), spec, o, "test");
  REQUIRE(naive);
  auto const naive_rmse = rmse_by_method(naive.value());
  REQUIRE(naive_rmse.count({"naive", 0}) == 1);
  CHECK(naive_rmse.at({"naive", 0}) < 2 * cpu_standard);
}
