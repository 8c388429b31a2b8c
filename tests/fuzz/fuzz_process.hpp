#pragma once
// One command run by the fuzz harness: fork + exec (no shell, so any token is passed as it is), stdout and
// stderr to files, killed with its whole process group after a time limit.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace fl::fuzz {

struct Outcome {
  bool hung = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it (a crash: SIGSEGV, SIGABRT, ...)
};

// `cwd` is where the child runs: a mutated relative output path ("--json yes", a default --out) lands there,
// never in the source tree.
inline Outcome run_with_limit(std::vector<std::string> const& argv, std::filesystem::path const& cwd,
                              std::filesystem::path const& out, std::filesystem::path const& err,
                              std::chrono::seconds limit) {
  pid_t const child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);  // its own group: a hung child's children (gnuplot, compile workers) die with it
    int const o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int const e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int const in = ::open("/dev/null", O_RDONLY);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::dup2(in, 0);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    std::vector<char*> args;
    for (auto const& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::setpgid(child, child);
  auto const deadline = std::chrono::steady_clock::now() + limit;
  Outcome outcome;
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-child, SIGKILL);
      ::waitpid(child, &status, 0);
      outcome.hung = true;
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  return outcome;
}

}  // namespace fl::fuzz
