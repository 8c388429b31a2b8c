#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "device/families/registry.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tuner/compile/prune.hpp"
#include "tuner/tune/compile_only.hpp"

using namespace fl;

namespace {
// The naive family at one head dim: its kernels are small, so a cold compile of its whole space stays
// a few seconds on a 2-core CI machine.
char const* const kArgs[] = {"fa-tune", "--compile-only", "--family", "naive",  "--head-dim",
                             "64",      "--causal",       "no",       "--jobs", "2"};
}  // namespace

TEST_CASE("fa-tune --compile-only compiles every config, then answers from the cache", "[tuner][compile]") {
  test::TempKernelsDir scratch;
  auto const options = tuner::parse_tune_options(10, kArgs);
  std::filesystem::path const kernels = FA_SOURCE_DIR "/kernels_src";
  auto const limits = device::limits_for(runtime::TargetArch::sm_90a);
  auto const cold =
      tuner::run_compile_only(options, runtime::TargetArch::sm_90a, kernels, scratch.path() / "db", limits);
  auto const family = device::find_family("naive");
  auto const expected =
      device::enumerate_space(*family, tuner::selected_problem_classes(options).front()).size();
  REQUIRE(cold.rows.size() == expected);
  CHECK(cold.compiled > 0);
  CHECK(cold.cache_hits == 0);
  for (auto const& row : cold.rows) {
    INFO(row.config << " " << row.reason);
    CHECK(row.kept);
    CHECK(row.registers > 0);
    CHECK_THAT(row.config, Catch::Contains("kScoreBits=32"));  // a precision option: never searched
  }
  auto const warm =
      tuner::run_compile_only(options, runtime::TargetArch::sm_90a, kernels, scratch.path() / "db", limits);
  CHECK(warm.compiled == 0);
  CHECK(warm.cache_hits == cold.compiled);
  auto const table = tuner::render_compile_only(warm);
  CHECK(table.find("hit") != std::string::npos);
  CHECK(table.find(std::to_string(expected) + " configs: " + std::to_string(expected) + " kept") !=
        std::string::npos);
}

TEST_CASE("pruning rejects spills (but not in the default), shared memory over the limit and zero occupancy",
          "[tuner][compile]") {
  auto const limits = device::limits_for(runtime::TargetArch::sm_90a);
  CHECK(tuner::prune_before_compile(300 * 1024, 128, limits));
  CHECK_FALSE(tuner::prune_before_compile(100 * 1024, 128, limits));
  CHECK(tuner::prune_before_compile(0, 2048, limits));

  auto const launch = [](std::string name, std::size_t dynamic_shared, unsigned threads) {
    device::LaunchStep step;
    step.name_expression = std::move(name);
    step.block = {threads, 1, 1};
    step.dynamic_shared_bytes = dynamic_shared;
    return std::vector<device::LaunchStep>{step};
  };
  runtime::CompiledProgram program;
  runtime::KernelResources kernel;
  kernel.function = "k";
  kernel.is_entry = true;
  kernel.registers = 128;
  program.resources.functions = {kernel};
  CHECK_FALSE(
      tuner::prune_on_resources(program, launch("k", 64 * 1024, 256), limits, tuner::SpillRule::prune));
  program.resources.functions[0].registers = 255;  // 256 x 1024 threads = 262144 > 65536 registers
  CHECK(tuner::prune_on_resources(program, launch("k", 0, 1024), limits, tuner::SpillRule::allow)
            ->find("zero occupancy") == 0);
  program.resources.functions[0].registers = 64;
  program.resources.functions[0].spill_store_bytes = 8;
  CHECK(tuner::prune_on_resources(program, launch("k", 0, 128), limits, tuner::SpillRule::prune)
            ->find("spills") == 0);
  CHECK_FALSE(tuner::prune_on_resources(program, launch("k", 0, 128), limits, tuner::SpillRule::allow));
  program.resources.functions[0].spill_store_bytes = 0;
  program.resources.functions[0].shared_bytes = 200 * 1024;
  CHECK(tuner::prune_on_resources(program, launch("k", 40 * 1024, 128), limits, tuner::SpillRule::allow)
            ->find("shared memory") == 0);
  // A launch the report does not name is checked against the program's largest kernel.
  CHECK(
      tuner::prune_on_resources(program, launch("unnamed", 40 * 1024, 128), limits, tuner::SpillRule::allow));
}

TEST_CASE(
    "each launch is checked against its own kernel: one kernel's static shared memory is not added to "
    "another's dynamic",
    "[tuner][compile]") {
  // FP8 fa3_sm90 d256's default on the H200 (2026-12-04): a transpose kernel with 17 KiB of static shared
  // memory launched before a forward with 225 KiB of dynamic; each fits the 227 KiB opt-in limit.
  auto const limits = device::limits_for(runtime::TargetArch::sm_90a);
  runtime::CompiledProgram program;
  runtime::KernelResources transpose;
  transpose.function = "transpose";
  transpose.is_entry = true;
  transpose.registers = 32;
  transpose.shared_bytes = 17408;
  runtime::KernelResources forward = transpose;
  forward.function = "forward";
  forward.registers = 168;
  forward.shared_bytes = 0;
  program.resources.functions = {transpose, forward};
  device::LaunchStep first;
  first.name_expression = "transpose";
  first.block = {256, 1, 1};
  device::LaunchStep second;
  second.name_expression = "forward";
  second.block = {384, 1, 1};
  second.dynamic_shared_bytes = 230488;
  CHECK_FALSE(tuner::prune_on_resources(program, {first, second}, limits, tuner::SpillRule::prune));
  // Over the limit in the kernel that has both: rejected, and the kernel is named.
  program.resources.functions[1].shared_bytes = 4096;
  auto const why = tuner::prune_on_resources(program, {first, second}, limits, tuner::SpillRule::prune);
  REQUIRE(why);
  CHECK(why->find("shared memory 234584 B") == 0);
  CHECK(why->find("in forward") != std::string::npos);
  // Occupancy, likewise: the transpose's 1024 threads of 32 registers fit; the forward's 384 of 168 too.
  first.block = {1024, 1, 1};
  program.resources.functions[1].shared_bytes = 0;
  CHECK_FALSE(tuner::prune_on_resources(program, {first, second}, limits, tuner::SpillRule::prune));
}

TEST_CASE("a compiler that crashes on some configs costs those configs, not the run", "[tuner][compile]") {
  test::TempKernelsDir scratch;
  auto const worker =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / "test_crashing_compile_worker";
  auto const options = tuner::parse_tune_options(10, kArgs);
  auto const family = device::find_family("naive");
  auto const problem = tuner::selected_problem_classes(options).front();
  auto const fallback = family->default_config(problem);
  // The compiler crashes on every program with the default's first kernel (the configs that share its
  // S = Q K^T kernel, whatever their softmax).
  auto const crash_on = family->name_expressions(fallback, problem).front();
  std::set<std::string> crashing;
  for (auto const& config : device::enumerate_space(*family, problem))
    if (family->name_expressions(config, problem).front() == crash_on)
      crashing.insert(device::to_string(config));
  setenv("FA_COMPILE_WORKER", worker.c_str(), 1);
  setenv("FL_TEST_CRASH_ON", crash_on.c_str(), 1);
  std::filesystem::path const kernels = FA_SOURCE_DIR "/kernels_src";
  auto const limits = device::limits_for(runtime::TargetArch::sm_90a);
  auto const report =
      tuner::run_compile_only(options, runtime::TargetArch::sm_90a, kernels, scratch.path() / "db", limits);
  unsetenv("FA_COMPILE_WORKER");
  unsetenv("FL_TEST_CRASH_ON");
  int crashed = 0, kept = 0;
  for (auto const& row : report.rows) {
    INFO(row.config << ": " << row.reason);
    if (crashing.count(row.config) != 0) {
      CHECK_FALSE(row.kept);
      CHECK_THAT(row.reason, Catch::Contains("SIGSEGV"));
      ++crashed;
    } else {
      CHECK(row.kept);
      ++kept;
    }
  }
  CHECK(crashed > 0);
  CHECK(kept > 0);
}
