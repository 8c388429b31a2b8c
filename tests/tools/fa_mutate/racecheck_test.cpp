// fa-mutate's racecheck without a GPU: stand-in sanitizers (shell scripts) print what compute-sanitizer
// prints, hang or crash, and GpuMutantRunner::race_tool_check must parse the summary, kill only on hazards
// the correct kernel lacks, name a missing sanitizer as the survivor's reason, and outlive a child that
// hangs (killed at its time limit with its process group) or crashes. With a GPU ([gpu]): the real
// compute-sanitizer on fa2_sm80's bwd-race.
#include <catch2/catch.hpp>

#include <algorithm>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "runtime/device.hpp"
#include "runtime/kernel_source.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/tool_process.hpp"
#include "tests/tools/fa_mutate/script_dir.hpp"
#include "tools/fa_mutate/gpu_mutant_runner.hpp"
#include "tools/fa_mutate/racecheck.hpp"
#include "tools/fa_mutate/racecheck_probe.hpp"
#include "tools/fa_mutate/timed_child.hpp"

using namespace fl;
using namespace fl::tools::fa_mutate;
namespace fs = std::filesystem;
namespace mut = fl::numerics::mutants;
using common::Precision;
using fl::test::ScriptDir;

namespace {

fs::path const kKernelsDir = fs::path(FA_SOURCE_DIR) / "kernels_src";

// compute-sanitizer's lines for `hazards` hazards that are all errors, as CUDA 13's racecheck prints them.
std::string summary(int hazards) {
  return "========= RACECHECK SUMMARY: " + std::to_string(hazards) + (hazards == 1 ? " hazard" : " hazards") +
         " displayed (" + std::to_string(hazards) + (hazards == 1 ? " error" : " errors") + ", 0 warnings)";
}

// A sanitizer that records its arguments and answers `mutant_hazards` for the mutant and
// `correct_hazards` for the correct kernel's control run (--racecheck-control), as the probe would.
fs::path fake_sanitizer(ScriptDir const& dir, int mutant_hazards, int correct_hazards) {
  return dir.write("compute-sanitizer", "echo \"$@\" >> \"" + (dir.path() / "args.txt").string() +
                                            "\"\n"
                                            "echo '========= COMPUTE-SANITIZER'\n"
                                            "echo '" +
                                            std::string(kRacecheckProbeRan) +
                                            "stand-in'\n"
                                            "case \"$*\" in *--racecheck-control*) echo '" +
                                            summary(correct_hazards) + "' ;; *) echo '" +
                                            summary(mutant_hazards) + "' ;; esac");
}

std::unique_ptr<GpuMutantRunner> runner_with(RacecheckSetup setup) {
  GpuMutantOptions options{"fa2_sm80", kKernelsDir, runtime::TargetArch::sm_90a, {}, 64, 32};
  setup.probe = "/bin/fa-mutate-stand-in";  // never run: the stand-in sanitizers do not exec it
  options.racecheck = std::move(setup);
  auto runner = GpuMutantRunner::create(options);
  REQUIRE(runner);
  return std::move(runner.value());
}

RacecheckSetup with_sanitizer(fs::path const& sanitizer,
                              std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  RacecheckSetup setup;
  setup.sanitizer = sanitizer;
  setup.limit = limit;
  return setup;
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(char const* name, std::string const& value) : name_(name) {
    if (char const* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  char const* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("parse_racecheck_summary reads compute-sanitizer's last summary line",
          "[tuner][mutants][racecheck]") {
  auto const eleven = parse_racecheck_summary("x\n" + summary(11) + "\n");
  REQUIRE(eleven);
  CHECK(eleven->hazards == 11);
  CHECK(eleven->errors == 11);
  CHECK(eleven->warnings == 0);
  auto const one = parse_racecheck_summary(summary(1));
  REQUIRE(one);
  CHECK(one->hazards == 1);
  auto const mixed =
      parse_racecheck_summary("========= RACECHECK SUMMARY: 3 hazards displayed (1 error, 2 warnings)\n");
  REQUIRE(mixed);
  CHECK(mixed->errors == 1);
  CHECK(mixed->warnings == 2);
  auto const last = parse_racecheck_summary(summary(4) + "\n" + summary(0) + "\n");
  REQUIRE(last);
  CHECK(last->hazards == 0);
  CHECK_FALSE(parse_racecheck_summary("========= ERROR SUMMARY: 0 errors\n"));
  CHECK_FALSE(parse_racecheck_summary(""));
}

TEST_CASE("a racecheck that reports hazards the correct kernel lacks kills bwd-race",
          "[tuner][mutants][racecheck]") {
  ScriptDir dir;
  auto runner = runner_with(with_sanitizer(fake_sanitizer(dir, 11, 0)));
  auto const report = runner->race_tool_check(mut::MutantId::bwd_race, Precision::bf16, 7);
  REQUIRE(report);
  INFO(report->verdict);
  CHECK(report->kills);
  CHECK(report->verdict.rfind("racecheck: 11 hazards (11 errors, 0 warnings) on ", 0) == 0);
  CHECK(report->verdict.find("fa2_sm80_bwd") != std::string::npos);
  CHECK(report->verdict.find("correct kernel: 0 hazards") != std::string::npos);
  CHECK(report->evidence == summary(11).substr(10));  // from "RACECHECK SUMMARY:" on
  // The sanitizer ran racecheck on the probe with the runner's request, then the control once.
  std::string const args = fl::test::read_text(dir.path() / "args.txt");
  CHECK(args.rfind("--tool racecheck /bin/fa-mutate-stand-in --racecheck-probe bwd-race --target gpu "
                   "--family fa2_sm80 --dtype bf16 --head-dim 64 --seed 7 --kernels-dir ",
                   0) == 0);
  CHECK(std::count(args.begin(), args.end(), '\n') == 2);
  CHECK(args.find("--racecheck-control") != std::string::npos);
  CHECK(args.find("--block-m 64 --block-n 32") != std::string::npos);
  (void)runner->race_tool_check(mut::MutantId::bwd_race, Precision::bf16, 7);
  std::string const again = fl::test::read_text(dir.path() / "args.txt");
  CHECK(std::count(again.begin(), again.end(), '\n') == 3);  // the control is not run twice
}

TEST_CASE("racecheck finds no hazards, or the correct kernel has them too: bwd-race survives with the reason",
          "[tuner][mutants][racecheck]") {
  ScriptDir dir;
  SECTION("no hazards") {
    auto runner = runner_with(with_sanitizer(fake_sanitizer(dir, 0, 0)));
    auto const report = runner->race_tool_check(mut::MutantId::bwd_race, Precision::bf16, 1);
    REQUIRE(report);
    CHECK_FALSE(report->kills);
    CHECK(report->verdict.rfind("racecheck: 0 hazards (0 errors, 0 warnings) on ", 0) == 0);
    std::string const args = fl::test::read_text(dir.path() / "args.txt");
    CHECK(args.find("--racecheck-control") == std::string::npos);  // no control needed
  }
  SECTION("the correct kernel has hazards too") {
    auto runner = runner_with(with_sanitizer(fake_sanitizer(dir, 11, 2)));
    auto const report = runner->race_tool_check(mut::MutantId::bwd_race, Precision::bf16, 1);
    REQUIRE(report);
    CHECK_FALSE(report->kills);
    CHECK(report->verdict.find("but the correct kernel has 2 hazards (2 errors, 0 warnings) too") !=
          std::string::npos);
  }
}

TEST_CASE("without compute-sanitizer, a hang, a crash or a probe that never ran: a survivor with the reason",
          "[tuner][mutants][racecheck]") {
  ScriptDir dir;
  auto verdict_of = [](RacecheckSetup setup) {
    auto runner = runner_with(std::move(setup));
    auto const report = runner->race_tool_check(mut::MutantId::bwd_race, Precision::bf16, 1);
    REQUIRE(report);
    CHECK_FALSE(report->kills);
    return report->verdict;
  };
  SECTION("not found") {
    ScopedEnv const path("PATH", dir.path().string());
    ScopedEnv const cuda("CUDA_HOME", dir.path().string());
    CHECK_FALSE(find_compute_sanitizer());
    RacecheckSetup const setup = discover_racecheck();
    CHECK_FALSE(setup.sanitizer);
    CHECK(verdict_of(setup) == "no compute-sanitizer on PATH or in " + (dir.path() / "bin").string() +
                                   ": races were only tested by reruns");
  }
  SECTION("found on PATH, else in CUDA_HOME/bin") {
    fs::path const in_toolkit = dir.write("toolkit/bin/compute-sanitizer", "exit 0");
    fs::path const on_path = dir.write("path/compute-sanitizer", "exit 0");
    ScopedEnv const cuda("CUDA_HOME", (dir.path() / "toolkit").string());
    {
      ScopedEnv const path("PATH", "/nonexistent:" + on_path.parent_path().string());
      CHECK(find_compute_sanitizer() == on_path);
    }
    ScopedEnv const path("PATH", "/nonexistent");
    CHECK(find_compute_sanitizer() == in_toolkit);
    fs::permissions(in_toolkit, fs::perms::owner_read);  // not executable: not a sanitizer
    CHECK_FALSE(find_compute_sanitizer());
  }
  SECTION("a hang is killed at the time limit, and fa-mutate goes on") {
    auto const start = std::chrono::steady_clock::now();
    std::string const v =
        verdict_of(with_sanitizer(dir.write("hang", "sleep 60"), std::chrono::milliseconds(400)));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    CHECK(v.rfind("racecheck did not finish within 0.4 s (killed with its process group", 0) == 0);
    CHECK(v.find("races were only tested by reruns") != std::string::npos);
  }
  SECTION("a crash") {
    std::string const v = verdict_of(with_sanitizer(dir.write("crash", "echo dying; kill -SEGV $$")));
    CHECK(v ==
          "racecheck run failed (ended by signal 11 (SIGSEGV)): dying: races were only tested by reruns");
  }
  SECTION("a probe that failed before running the kernel (no 'ran' line, though a clean summary)") {
    std::string const v = verdict_of(with_sanitizer(dir.write("no-kernel", "echo '" + summary(0) + "'")));
    CHECK(v.rfind("racecheck run never ran the kernel", 0) == 0);
  }
  SECTION("a probe that failed: its exit code and last line") {
    std::string const v = verdict_of(
        with_sanitizer(dir.write("failed", "echo 'fa-mutate --racecheck-probe: no CUDA driver'; exit 3")));
    CHECK(v ==
          "racecheck run failed (exit 3): fa-mutate --racecheck-probe: no CUDA driver: races were only "
          "tested by reruns");
  }
}

TEST_CASE(
    "fa-mutate parses the probe arguments the runner passes (run for real through a pass-through sanitizer)",
    "[tuner][mutants][racecheck]") {
  ScriptDir dir;
  // Drops "--tool racecheck" and runs the probe itself: fa-mutate --racecheck-probe, built beside this test.
  RacecheckSetup setup = with_sanitizer(dir.write("pass-through", "shift 2; exec \"$@\""));
  fs::path const fa_mutate = fl::test::sibling_binary("fa-mutate");
  REQUIRE(fs::exists(fa_mutate));
  GpuMutantOptions options{"fa2_sm80", kKernelsDir, runtime::TargetArch::sm_90a, {}, 64, 32};
  setup.probe = fa_mutate;
  options.racecheck = setup;
  auto runner = GpuMutantRunner::create(options);
  REQUIRE(runner);
  auto const report = runner.value()->race_tool_check(mut::MutantId::bwd_race, Precision::bf16, 1);
  REQUIRE(report);
  INFO(report->verdict);
  CHECK_FALSE(report->kills);
  if (fl::test::gpu_unavailable_reason()) {  // accepted (not exit 2), then no GPU: exit 3 with its line
    CHECK(report->verdict.rfind("racecheck run failed (exit 3): fa-mutate --racecheck-probe: no CUDA", 0) ==
          0);
  } else {  // it ran the mutant; only the summary a real sanitizer adds is missing
    CHECK(report->verdict.rfind("racecheck printed no RACECHECK SUMMARY line: racecheck probe ran: bwd-race",
                                0) == 0);
  }
}

TEST_CASE("compute-sanitizer's racecheck kills fa2_sm80's bwd-race and passes its correct backward",
          "[gpu][tuner][mutants][racecheck]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  auto arch = runtime::arch_for_device(context->info().cc_major, context->info().cc_minor);
  REQUIRE(arch);
  auto const kernels_dir = runtime::resolve_kernels_dir();
  REQUIRE(kernels_dir);
  RacecheckSetup const setup = discover_racecheck();
  INFO(setup.missing);
  REQUIRE(setup.sanitizer);  // the CUDA toolkit of a GPU machine carries it
  auto runner = GpuMutantRunner::create({"fa2_sm80", kernels_dir.value(), arch.value(), {}, 64, 32});
  REQUIRE(runner);
  auto const report = runner.value()->race_tool_check(mut::MutantId::bwd_race, Precision::bf16, 1);
  REQUIRE(report);
  INFO(report->verdict << " / " << report->evidence);
  CHECK(report->kills);
  CHECK(report->verdict.find("correct kernel: 0 hazards") != std::string::npos);
}
