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
constexpr std::uint32_t kFormatVersion = 1;

class Writer {
 public:
  void u64(std::uint64_t v) { bytes_.append(reinterpret_cast<char const*>(&v), sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    bytes_.append(s);
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(std::string const& bytes) : bytes_(bytes) {}
  std::uint64_t u64() {
    if (bytes_.size() - at_ < sizeof(std::uint64_t)) throw std::runtime_error("truncated message");
    std::uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string str() {
    auto const n = u64();
    if (n > bytes_.size() - at_) throw std::runtime_error("truncated message");
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }

 private:
  std::string const& bytes_;
  std::size_t at_ = 0;
};

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

std::string encode_request(CompileRequest const& r) {
  Writer w;
  w.u64(kFormatVersion);
  w.str(r.program_name);
  w.str(r.source);
  w.u64(r.headers.size());
  for (auto const& h : r.headers) {
    w.str(h.path);
    w.str(h.text);
    w.str(h.sha256);
    w.u64(h.spellings.size());
    for (auto const& s : h.spellings) w.str(s);
  }
  w.str(r.kernels_include_dir.string());
  w.u64(r.defines.size());
  for (auto const& [k, v] : r.defines) {
    w.str(k);
    w.str(v);
  }
  w.u64(r.name_expressions.size());
  for (auto const& e : r.name_expressions) w.str(e);
  w.str(arch_name(r.arch));
  w.u64(r.extra_options.size());
  for (auto const& o : r.extra_options) w.str(o);
  w.u64(r.line_info ? 1 : 0);
  return w.take();
}

Result<CompileRequest> decode_request(std::string const& bytes) {
  try {
    Reader in(bytes);
    if (in.u64() != kFormatVersion) return worker_error("compile worker: another message format version");
    CompileRequest r;
    r.program_name = in.str();
    r.source = in.str();
    r.headers.resize(in.u64());
    for (auto& h : r.headers) {
      h.path = in.str();
      h.text = in.str();
      h.sha256 = in.str();
      h.spellings.resize(in.u64());
      for (auto& s : h.spellings) s = in.str();
    }
    r.kernels_include_dir = in.str();
    for (auto n = in.u64(); n > 0; --n) {
      auto key = in.str();
      r.defines[key] = in.str();
    }
    r.name_expressions.resize(in.u64());
    for (auto& e : r.name_expressions) e = in.str();
    auto arch = parse_target_arch(in.str());
    if (!arch) return arch.error();
    r.arch = arch.value();
    r.extra_options.resize(in.u64());
    for (auto& o : r.extra_options) o = in.str();
    r.line_info = in.u64() != 0;
    return r;
  } catch (std::exception const& e) {
    return worker_error(std::string("compile worker: bad request: ") + e.what());
  }
}

std::string encode_result(Result<CompiledProgram> const& result) {
  Writer w;
  w.u64(kFormatVersion);
  w.u64(result ? 1 : 0);
  if (!result) {
    w.str(result.error().stage);
    w.str(result.error().message);
    w.str(result.error().log);
    return w.take();
  }
  auto const& p = result.value();
  w.str(p.program_name);
  w.str(arch_name(p.arch));
  w.str(std::string_view(p.cubin.data(), p.cubin.size()));
  w.str(p.log);
  w.u64(p.lowered_names.size());
  for (auto const& [k, v] : p.lowered_names) {
    w.str(k);
    w.str(v);
  }
  std::uint64_t ms_bits = 0;
  static_assert(sizeof ms_bits == sizeof p.compile_ms);
  std::memcpy(&ms_bits, &p.compile_ms, sizeof ms_bits);
  w.u64(ms_bits);
  w.str(p.nvrtc_version);
  w.u64(p.options.size());
  for (auto const& o : p.options) w.str(o);
  return w.take();
}

Result<CompiledProgram> decode_result(std::string const& bytes) {
  try {
    Reader in(bytes);
    if (in.u64() != kFormatVersion) return worker_error("compile worker: another message format version");
    if (in.u64() == 0) {
      Error e;
      e.stage = in.str();
      e.message = in.str();
      e.log = in.str();
      return e;
    }
    CompiledProgram p;
    p.program_name = in.str();
    auto arch = parse_target_arch(in.str());
    if (!arch) return arch.error();
    p.arch = arch.value();
    auto const cubin = in.str();
    p.cubin.assign(cubin.begin(), cubin.end());
    p.log = in.str();
    for (auto n = in.u64(); n > 0; --n) {
      auto key = in.str();
      p.lowered_names[key] = in.str();
    }
    auto const ms_bits = in.u64();
    std::memcpy(&p.compile_ms, &ms_bits, sizeof ms_bits);
    p.nvrtc_version = in.str();
    p.options.resize(in.u64());
    for (auto& o : p.options) o = in.str();
    // The same parse as the in-process compile (nvrtc_compiler.cpp): the resources come from the log.
    p.resources = parse_ptxas_report(p.log);
    return p;
  } catch (std::exception const& e) {
    return worker_error(std::string("compile worker: bad answer: ") + e.what());
  }
}

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
