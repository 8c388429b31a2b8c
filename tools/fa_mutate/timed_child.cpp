#include "tools/fa_mutate/timed_child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

extern char** environ;

namespace fl::tools::fa_mutate {

namespace {

// How often the parent looks whether the child has exited: short against any child worth isolating.
constexpr std::chrono::milliseconds kPollInterval{20};
// The output kept: its tail (a summary line comes last), bounded so a runaway child cannot exhaust memory.
constexpr off_t kMaxOutputBytes = off_t{16} << 20;

std::string signal_text(int signal_number) {
  char const* name = sigabbrev_np(signal_number);
  return std::to_string(signal_number) + (name ? std::string(" (SIG") + name + ")" : "");
}

std::string read_tail(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return {};
  off_t const start = info.st_size > kMaxOutputBytes ? info.st_size - kMaxOutputBytes : 0;
  std::string out;
  out.resize(std::size_t(info.st_size - start));
  std::size_t done = 0;
  while (done < out.size()) {
    auto const n = ::pread(fd, out.data() + done, out.size() - done, start + off_t(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += std::size_t(n);
  }
  out.resize(done);
  return out;
}

}  // namespace

std::string TimedChild::how_it_ended() const {
  if (!start_error.empty()) return "not started: " + start_error;
  if (timed_out) return "killed at the time limit";
  if (signal) return "ended by signal " + signal_text(*signal);
  if (exit_code) return "exit " + std::to_string(*exit_code);
  return "ended in an unknown way";
}

TimedChild run_timed_child(std::vector<std::string> const& argv, std::chrono::milliseconds limit) {
  TimedChild child;
  if (argv.empty()) {
    child.start_error = "no command";
    return child;
  }
  // The output lives in an anonymous file: nothing is left on disk whatever ends either process.
  int const output = ::memfd_create("fl-timed-child", MFD_CLOEXEC);
  if (output < 0) {
    child.start_error = std::string("memfd_create: ") + std::strerror(errno);
    return child;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, output, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own group: killed as one, and Ctrl-C stays ours
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD}) sigaddset(&defaults, s);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &empty);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (auto const& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int const spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    ::close(output);
    child.start_error = argv[0] + ": " + std::strerror(spawned);
    return child;
  }
  auto const deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    pid_t const done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;  // cannot happen for our own child; nothing left to wait for
    if (std::chrono::steady_clock::now() >= deadline) {
      // The leader is not reaped yet, so its pid (the group's id) cannot have been reused.
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      child.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  if (!child.timed_out) {
    if (WIFEXITED(status)) child.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) child.signal = WTERMSIG(status);
  }
  child.output = read_tail(output);
  ::close(output);
  return child;
}

}  // namespace fl::tools::fa_mutate
