#pragma once
// NVRTC in a separate process: a compiler crash (NVRTC 13.0 segfaults on some inline PTX, e.g. a wgmma
// whose descriptors are compile-time constants) or a hang costs that one program, not the run. The parent
// spawns the worker executable (fa-compile-worker, beside the running binary), writes the request to its
// stdin, reads the result from its stdout within a timeout, and reports a death by signal or a timeout as
// that program's compile failure, naming the signal.
//
// posix_spawn, not fork: the tuner compiles from a pool of threads, and a forked child of a threaded process
// may inherit a lock (NVRTC's, the allocator's) that no thread will ever release. The worker runs in its own
// process group, so the terminal's Ctrl-C reaches fa-tune (which then finishes the candidate in flight), not
// the compile it waits for.
#include <chrono>
#include <filesystem>
#include <string>

#include "runtime/compile_request.hpp"
#include "runtime/compile_wire.hpp"
#include "runtime/nvrtc_compiler.hpp"

namespace fl::runtime {

struct CompileWorkerOptions {
  std::filesystem::path executable;  // the worker binary
  std::chrono::milliseconds timeout{std::chrono::minutes(3)};
};

struct IsolatedCompile {
  Result<CompiledProgram> result = Error{};
  // The worker died (signal) or was killed after the timeout: the failure belongs to the program, and
  // compiling the same request again would end the same way.
  bool worker_died = false;
};

// The worker binary: $FA_COMPILE_WORKER when set, else fa-compile-worker beside the running executable;
// nullopt when neither exists.
std::optional<std::filesystem::path> find_compile_worker();

IsolatedCompile compile_in_worker(CompileRequest const& request, CompileWorkerOptions const& options);

// The worker's side: read one request from in_fd, compile it, write the result to out_fd. Returns the
// worker's exit code (0 also when the compile failed: the failure travels in the result).
int serve_compile_request(int in_fd, int out_fd);

}  // namespace fl::runtime
