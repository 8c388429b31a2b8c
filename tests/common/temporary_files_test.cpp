// Temporary files never outlive the process: a child holding one is sent SIGTERM (and SIGINT) by this
// test; it exits 128 + the signal and the file is gone. Also the atomic writer's choices per target.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/atomic_file.hpp"
#include "common/stop_signals.hpp"
#include "common/temporary_files.hpp"

namespace fs = std::filesystem;
using namespace fl::common;

namespace {

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("fl_temporary_files_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
};

// Forks a child that creates `temp` as a registered temporary file, then waits for a signal; returns the
// child's exit status after `signal_number` was sent to it (twice for StopOnSignals, whose first is a
// request).
int exit_code_of_child(fs::path const& temp, int signal_number, bool cooperative) {
  fs::path const ready = temp.string() + ".ready";
  pid_t const child = ::fork();
  if (child == 0) {
    if (cooperative) {
      static StopOnSignals const handlers;  // never destroyed: the child ends by _exit
    } else {
      exit_on_signals();
    }
    TemporaryFile file(temp.string());
    std::ofstream(temp) << "half of a file";
    std::ofstream(ready) << "1";
    for (;;) ::pause();
  }
  // The signal goes only once the child's handlers are in place: sent earlier, it met the handlers the
  // child inherited from Catch2, which reported it and let the child go on to pause() forever (seen once,
  // with a load of 12 on two cores, when the old 5 s wait for `ready` ran out).
  for (int i = 0; i < 6000 && !fs::exists(ready); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  bool const started = fs::exists(ready);
  ::kill(child, started ? signal_number : SIGKILL);
  if (started && cooperative) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(child, signal_number);
  }
  // Never wait forever: a child still alive after 30 s is killed and reported as -SIGKILL.
  int status = 0;
  for (int i = 0; i < 3000 && ::waitpid(child, &status, WNOHANG) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (::waitpid(child, &status, WNOHANG) == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  fs::remove(ready);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace

TEST_CASE("SIGTERM and SIGINT end a command at once with 143 / 130, its temporary file removed",
          "[common][signals]") {
  Scratch scratch;
  auto const temp = scratch.dir / "out.json.tmp1";
  CHECK(exit_code_of_child(temp, SIGTERM, false) == 143);
  CHECK(!fs::exists(temp));
  CHECK(exit_code_of_child(temp, SIGINT, false) == 130);
  CHECK(!fs::exists(temp));
  // fa-tune's handlers: the second signal of a kind ends the process the same way (was SA_RESETHAND: the
  // default action, which left the temporary file behind).
  CHECK(exit_code_of_child(temp, SIGINT, true) == 130);
  CHECK(!fs::exists(temp));
}

TEST_CASE("atomic writes: regular files renamed into place, links followed, devices written in place",
          "[common][atomic]") {
  Scratch scratch;
  write_file_atomically(scratch.dir / "a.txt", "one");
  write_file_atomically(scratch.dir / "a.txt", "two");
  std::ifstream in(scratch.dir / "a.txt");
  std::string text;
  in >> text;
  CHECK(text == "two");
  fs::create_symlink("a.txt", scratch.dir / "link.txt");
  write_file_atomically(scratch.dir / "link.txt", "three");
  CHECK(fs::is_symlink(scratch.dir / "link.txt"));  // was replaced by a regular file
  std::ifstream again(scratch.dir / "a.txt");
  again >> text;
  CHECK(text == "three");
  // A dangling link: its target is created.
  fs::create_symlink("new.txt", scratch.dir / "dangling.txt");
  write_file_atomically(scratch.dir / "dangling.txt", "four");
  CHECK(fs::exists(scratch.dir / "new.txt"));
  // /dev/full is a device: written in place (never renamed over), and its ENOSPC is an error.
  CHECK_THROWS_WITH(write_file_atomically("/dev/full", "x"), Catch::Contains("/dev/full"));
  CHECK(fs::is_character_file("/dev/full"));
  // A folder is refused without a temporary file left beside it (was "<dir>.tmp<pid>").
  fs::create_directories(scratch.dir / "folder");
  CHECK_THROWS_WITH(write_file_atomically(scratch.dir / "folder", "x"), Catch::Contains("is a folder"));
  for (auto const& entry : fs::directory_iterator(scratch.dir))
    CHECK(entry.path().string().find(".tmp") == std::string::npos);
  CHECK(output_file_problem(scratch.dir / "missing" / "x.json") ==
        "folder " + (scratch.dir / "missing").string() + " does not exist");
  CHECK(output_folder_problem(scratch.dir / "a.txt" / "sub") ==
        (scratch.dir / "a.txt").string() + " is not a folder");
  CHECK(!output_folder_problem(scratch.dir / "new" / "deeper"));
  for (auto const& entry : fs::directory_iterator(scratch.dir))  // the probes are gone
    CHECK(entry.path().filename().string().find(".fl-probe") == std::string::npos);
}

TEST_CASE("an output folder that refuses new files is refused up front, even to root", "[common][atomic]") {
  // /proc passes access(W_OK) for root, yet no file can be created there: fa-tune --json /proc/x.json
  // went on to the work (exit 3 without a GPU, the hours of tuning with one) before this probe.
  auto const problem = output_file_problem("/proc/x.json");
  REQUIRE(problem);
  CHECK_THAT(*problem, Catch::Contains("/proc"));
  auto const folder = output_folder_problem("/proc/flashlab-report");
  REQUIRE(folder);
  CHECK_THAT(*folder, Catch::Contains("/proc"));
}
