#include "device/compile/compile_service.hpp"

#include <chrono>
#include <cstdio>
#include <mutex>

#include "common/sha256.hpp"
#include "db/compile_failures.hpp"
#include "db/schema.hpp"

namespace fl::device {

namespace {
// A cache that fails in the middle of a run (a page damaged after the open-time check, a full disk) is
// said once, and the run goes on compiling without it: a config is judged by its compile, never
// "rejected: cache: database disk image is malformed".
void cache_failed(std::string const& what) {
  static std::once_flag said;
  std::call_once(said, [&] {
    std::fprintf(stderr, "compile cache unusable, compiling without it: %s\n", what.c_str());
  });
}
}  // namespace

CompileService::CompileService(std::filesystem::path const& db_path, CompileIsolation isolation)
    : isolation_(std::move(isolation)) {
  if (!db_path.empty()) {
    database_ = std::make_unique<db::Database>(db::open_database(db_path));
    cache_ = std::make_unique<db::CompileCache>(*database_);
  }
}

runtime::Result<CompileResult> CompileService::compile(runtime::CompileRequest const& request) {
  auto const key = runtime::cache_key_material(request).sha256;
  auto const start = std::chrono::steady_clock::now();
  CompileResult result;
  result.cache_key = key;
  if (cache_) {
    try {
      auto hit = cache_->lookup_with_reason(key);
      result.cache_note = hit.discarded_because;
      if (hit.record) {
        result.program = from_record(*hit.record, request.arch);
        result.from_cache = true;
        result.elapsed_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return result;
      }
    } catch (db::DatabaseError const& e) {
      cache_failed(e.what());
    }
  }
  if (database_) {
    std::optional<db::CompileFailure> crashed;
    try {
      crashed = db::find_compile_failure(*database_, key);
    } catch (db::DatabaseError const& e) {
      cache_failed(e.what());
    }
    if (crashed)
      return runtime::Error{"compile",
                            crashed->message + " (recorded " + crashed->recorded_at + "; not retried)", ""};
  }
  auto compiled = [&]() -> runtime::Result<runtime::CompiledProgram> {
    if (!isolation_.worker) return runtime::compile(request);
    auto isolated = runtime::compile_in_worker(request, {*isolation_.worker, isolation_.timeout});
    if (isolated.worker_died && database_) try {
        db::store_compile_failure(*database_, key, isolated.result.error().message);
      } catch (db::DatabaseError const& e) {
        cache_failed(e.what());
      }
    return std::move(isolated.result);
  }();
  if (!compiled) return compiled.error();
  result.program = std::move(compiled).value();
  result.elapsed_ms = result.program.compile_ms;
  if (cache_) {
    try {
      cache_->store(key, to_record(result.program, request));
    } catch (db::DatabaseError const& e) {
      cache_failed(e.what());
    }
  }
  return result;
}

void CompileService::invalidate(std::string const& cache_key) {
  if (cache_) cache_->invalidate(cache_key);
}

db::CompileRecord to_record(runtime::CompiledProgram const& program, runtime::CompileRequest const& request) {
  db::CompileRecord record;
  record.program_name = program.program_name;
  record.arch = std::string(runtime::arch_name(program.arch));
  record.nvrtc_version = program.nvrtc_version;
  for (auto const& option : program.options) record.options += option + "\n";
  for (auto const& header : request.headers) record.source_hashes += header.sha256 + " " + header.path + "\n";
  record.source_hashes += common::sha256_hex(request.source) + " " + request.program_name + "\n";
  record.cubin = program.cubin;
  record.compile_log = program.log;
  for (auto const& f : program.resources.functions)
    record.kernel_resources[f.function] =
        db::KernelResources{.registers = f.registers,
                            .shared_bytes = static_cast<std::int64_t>(f.shared_bytes),
                            .spill_stores = static_cast<std::int64_t>(f.spill_store_bytes),
                            .spill_loads = static_cast<std::int64_t>(f.spill_load_bytes),
                            .stack_bytes = static_cast<std::int64_t>(f.stack_frame_bytes)};
  record.lowered_names = program.lowered_names;
  record.compile_ms = program.compile_ms;
  return record;
}

runtime::CompiledProgram from_record(db::CompileRecord const& record, runtime::TargetArch arch) {
  runtime::CompiledProgram program;
  program.program_name = record.program_name;
  program.arch = arch;
  program.cubin = record.cubin;
  program.log = record.compile_log;
  program.lowered_names = record.lowered_names;
  // The verbose ptxas report is in the stored log: parse it again rather than trusting a second copy,
  // so is_entry and the constant bank sizes come back too.
  program.resources = runtime::parse_ptxas_report(record.compile_log);
  program.compile_ms = record.compile_ms;
  program.nvrtc_version = record.nvrtc_version;
  return program;
}

}  // namespace fl::device
