#pragma once
// Compile with the SQLite compile cache in front of NVRTC: look the request's key up, compile on a miss,
// store the result. One CompileService per thread (a SQLite connection belongs to one thread); the
// compile pool gives each worker its own.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "db/compile_cache.hpp"
#include "db/database.hpp"
#include "runtime/compile_request.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tuner/family/kernel_family.hpp"

namespace fl::tuner {

struct CompileResult {
  runtime::CompiledProgram program;
  std::string cache_key;
  bool from_cache = false;
  double elapsed_ms = 0.0;  // what this call cost: NVRTC's compile time on a miss, the look-up on a hit
  std::string cache_note;   // why a cached row was discarded, when one was
};

// Kernel sources read once per run and shared by every worker: what is hashed is what is compiled, and
// every config of one run sees the same text even if a file is edited mid-run.
class SourceSet {
 public:
  explicit SourceSet(std::filesystem::path kernels_dir) : kernels_dir_(std::move(kernels_dir)) {}
  runtime::Result<runtime::KernelSource> get(std::string const& kernels_file);
  std::filesystem::path const& kernels_dir() const { return kernels_dir_; }

 private:
  std::filesystem::path kernels_dir_;
  std::mutex mutex_;
  std::map<std::string, runtime::KernelSource> loaded_;
};

class CompileService {
 public:
  // db_path empty: no cache (every call compiles).
  CompileService(std::filesystem::path const& db_path, std::shared_ptr<SourceSet> sources,
                 runtime::TargetArch arch);

  runtime::Result<CompileResult> compile(CompileUnit const& unit);
  // The cached CUBIN behind `cache_key` failed to load on the GPU: drop it so the next call recompiles.
  void invalidate(std::string const& cache_key);

  runtime::Result<runtime::CompileRequest> request_for(CompileUnit const& unit);

 private:
  std::unique_ptr<db::Database> database_;
  std::unique_ptr<db::CompileCache> cache_;
  std::shared_ptr<SourceSet> sources_;
  runtime::TargetArch arch_;
};

// Conversions between the runtime's compile result and the cache's row (db/ may not include runtime/).
db::CompileRecord to_record(runtime::CompiledProgram const& program, runtime::CompileRequest const& request);
runtime::CompiledProgram from_record(db::CompileRecord const& record, runtime::TargetArch arch);

}  // namespace fl::tuner
