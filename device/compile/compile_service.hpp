#pragma once
// Compile with the SQLite compile cache in front of NVRTC: look the request's key up (runtime's SHA-256 of
// every input that can change the CUBIN), compile on a miss (in a worker process), store the result; a
// request that crashed or hung its worker is stored as such (db/compile_failures) and answered from there.
// One CompileService per thread (a SQLite connection belongs to one thread); the compile pool gives each
// worker its own.
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "db/compile_cache.hpp"
#include "db/database.hpp"
#include "runtime/compile_request.hpp"
#include "runtime/compile_worker.hpp"
#include "runtime/nvrtc_compiler.hpp"

namespace fl::device {

struct CompileResult {
  runtime::CompiledProgram program;
  std::string cache_key;
  bool from_cache = false;
  double elapsed_ms = 0.0;  // what this call cost: NVRTC's compile time on a miss, the look-up on a hit
  std::string cache_note;   // why a cached row was discarded, when one was
};

// How NVRTC runs: in a worker process (runtime/compile_worker.hpp; a crash or a hang is that config's
// failure, recorded and never retried for the same request) or, without a worker binary, in this process.
struct CompileIsolation {
  std::optional<std::filesystem::path> worker = runtime::find_compile_worker();
  std::chrono::milliseconds timeout{std::chrono::minutes(3)};
};

class CompileService {
 public:
  // db_path empty: no cache (every call compiles).
  explicit CompileService(std::filesystem::path const& db_path, CompileIsolation isolation = {});

  runtime::Result<CompileResult> compile(runtime::CompileRequest const& request);
  // The cached CUBIN behind `cache_key` failed to load on the GPU: drop it so the next call recompiles.
  void invalidate(std::string const& cache_key);

 private:
  std::unique_ptr<db::Database> database_;
  std::unique_ptr<db::CompileCache> cache_;
  CompileIsolation isolation_;
};

// Conversions between the runtime's compile result and the cache's row (db/ may not include runtime/).
db::CompileRecord to_record(runtime::CompiledProgram const& program, runtime::CompileRequest const& request);
runtime::CompiledProgram from_record(db::CompileRecord const& record, runtime::TargetArch arch);

}  // namespace fl::device
