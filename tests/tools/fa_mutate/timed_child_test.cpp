// run_timed_child (tools/fa_mutate/timed_child.hpp): the exit, the signal, the time limit, the group killed.
#include "tools/fa_mutate/timed_child.hpp"

#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/tool_process.hpp"
#include "tests/tools/fa_mutate/script_dir.hpp"

using namespace fl::tools::fa_mutate;
using fl::test::ScriptDir;
namespace fs = std::filesystem;

TEST_CASE("run_timed_child reports the exit, the signal and the time limit, and kills the child's group",
          "[tuner][mutants][racecheck]") {
  ScriptDir dir;
  TimedChild const ok =
      run_timed_child({"sh", "-c", "echo out; echo err >&2; exit 4"}, std::chrono::seconds(10));
  CHECK(ok.exit_code == 4);
  CHECK(ok.output == "out\nerr\n");
  TimedChild const crashed = run_timed_child({"sh", "-c", "kill -SEGV $$"}, std::chrono::seconds(10));
  CHECK(crashed.signal == SIGSEGV);
  CHECK(crashed.how_it_ended() == "ended by signal 11 (SIGSEGV)");
  // A hang, with a grandchild (a sanitizer's target): both are killed at the limit.
  fs::path const pid_file = dir.path() / "grandchild.pid";
  auto const start = std::chrono::steady_clock::now();
  TimedChild const hung = run_timed_child(
      {"sh", "-c", "sleep 60 & echo $! > " + pid_file.string() + "; wait"}, std::chrono::milliseconds(300));
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(hung.timed_out);
  CHECK_FALSE(hung.exit_code);
  CHECK(seconds < 5.0);
  pid_t const grandchild = std::stoi(fl::test::read_text(pid_file));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {  // reaped by init shortly after the SIGKILL
    gone = ::kill(grandchild, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(gone);
  TimedChild const missing =
      run_timed_child({(dir.path() / "no-such-tool").string()}, std::chrono::seconds(1));
  CHECK_FALSE(missing.start_error.empty());
}
