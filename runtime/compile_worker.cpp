#include "runtime/compile_worker.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace fl::runtime {

namespace {

constexpr char const* kWorkerName = "fa-compile-worker";

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    auto const n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(std::size_t(n));
  }
  return true;
}

std::string read_all(int fd) {
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    auto const n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, std::size_t(n));
  }
}

std::string signal_text(int signal_number) {
  char const* name = sigabbrev_np(signal_number);
  return std::to_string(signal_number) + (name ? std::string(" (SIG") + name + ")" : "");
}

Error worker_error(std::string message) {
  return Error{"compile", std::move(message), ""};
}

}  // namespace

std::optional<std::filesystem::path> find_compile_worker() {
  if (char const* env = std::getenv("FA_COMPILE_WORKER"); env && *env) {
    if (std::filesystem::exists(env)) return std::filesystem::path(env);
    return std::nullopt;
  }
  std::error_code ec;
  auto const self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  auto const beside = self.parent_path() / kWorkerName;
  if (std::filesystem::exists(beside)) return beside;
  return std::nullopt;
}

int serve_compile_request(int in_fd, int out_fd) {
  auto request = decode_request(read_all(in_fd));
  auto const answer = request ? encode_result(compile(request.value())) : encode_result(request.error());
  return write_all(out_fd, answer) ? 0 : 1;
}

IsolatedCompile compile_in_worker(CompileRequest const& request, CompileWorkerOptions const& options) {
  IsolatedCompile outcome;
  int to_worker[2], from_worker[2];
  if (pipe2(to_worker, O_CLOEXEC) != 0) {
    outcome.result = worker_error(std::string("compile worker: pipe: ") + std::strerror(errno));
    return outcome;
  }
  if (pipe2(from_worker, O_CLOEXEC) != 0) {
    outcome.result = worker_error(std::string("compile worker: pipe: ") + std::strerror(errno));
    ::close(to_worker[0]);
    ::close(to_worker[1]);
    return outcome;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_worker[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_worker[1], STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own process group: the terminal's Ctrl-C is ours
  // The parent's signal handlers must not be inherited as "ignored"; default dispositions for the two.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  std::string const exe = options.executable.string();
  char* argv[] = {const_cast<char*>(exe.c_str()), nullptr};
  pid_t pid = 0;
  int const spawned = posix_spawn(&pid, exe.c_str(), &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(to_worker[0]);
  ::close(from_worker[1]);
  if (spawned != 0) {
    ::close(to_worker[1]);
    ::close(from_worker[0]);
    outcome.result = worker_error("compile worker: cannot start " + exe + ": " + std::strerror(spawned));
    return outcome;
  }
  // The worker reads the whole request before it writes anything, so writing first cannot deadlock. A
  // worker that dies early closes its stdin: the write fails with EPIPE, not SIGPIPE (ignored here).
  struct sigaction ignore_pipe {
  }, previous_pipe{};
  ignore_pipe.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore_pipe, &previous_pipe);
  (void)write_all(to_worker[1], encode_request(request));
  sigaction(SIGPIPE, &previous_pipe, nullptr);
  ::close(to_worker[1]);

  std::string answer;
  bool timed_out = false;
  auto const deadline = std::chrono::steady_clock::now() + options.timeout;
  char buffer[1 << 16];
  for (;;) {
    auto const left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fd{from_worker[0], POLLIN, 0};
    int const ready = ::poll(&fd, 1, int(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    auto const n = ::read(from_worker[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of the answer (or the worker died)
    answer.append(buffer, std::size_t(n));
  }
  ::close(from_worker[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", std::chrono::duration<double>(options.timeout).count());
    outcome.worker_died = true;
    outcome.result = worker_error(std::string("NVRTC did not finish within ") + seconds +
                                  " s; the compile worker was killed");
  } else if (WIFSIGNALED(status)) {
    outcome.worker_died = true;
    outcome.result =
        worker_error("NVRTC crashed the compile worker: signal " + signal_text(WTERMSIG(status)));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    outcome.result = worker_error("the compile worker exited with status " +
                                  std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  } else {
    outcome.result = decode_result(answer);
  }
  return outcome;
}

}  // namespace fl::runtime
