#include "db/compile_cache.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "common/sha256.hpp"

namespace fl::db {
namespace {

constexpr std::size_t kSha256HexDigits = 64;

// A stored row that cannot be trusted; caught in lookup and turned into a miss.
class MalformedRow : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void require_key(std::string_view key) {
  if (!is_sha256_hex(key)) {
    throw std::invalid_argument("compile cache key must be 64 lowercase hex digits (a SHA-256), got '" +
                                std::string(key) + "'");
  }
}

// SQLite codes that mean "this row's bytes are bad", as opposed to the database being unusable.
bool is_damaged_row_error(DatabaseError const& error) {
  int const code = error.primary_code();
  return code == SQLITE_MISMATCH || code == SQLITE_CORRUPT || code == SQLITE_TOOBIG || code == SQLITE_RANGE;
}

void require_non_negative(KernelResources const& r, std::string const& kernel) {
  bool const ok = r.registers >= 0 && r.shared_bytes >= 0 && r.spill_stores >= 0 && r.spill_loads >= 0 &&
                  r.stack_bytes >= 0;
  if (!ok) throw MalformedRow("negative resource count for kernel " + kernel);
}

constexpr std::string_view kSelectRow =
    "SELECT program_name, arch, nvrtc_version, options, source_hashes, cubin, cubin_bytes, cubin_sha256, "
    "compile_log, compile_ms, created_at FROM compile_cache WHERE cache_key = ?1";
constexpr std::string_view kSelectKernels =
    "SELECT lowered_name, registers, shared_bytes, spill_stores, spill_loads, stack_bytes "
    "FROM compile_cache_kernels WHERE cache_key = ?1";
constexpr std::string_view kSelectNames =
    "SELECT name_expression, lowered_name FROM compile_cache_names WHERE cache_key = ?1";

constexpr std::string_view kUpsertRow = R"sql(
INSERT INTO compile_cache (cache_key, program_name, arch, nvrtc_version, options, source_hashes, cubin,
                           cubin_bytes, cubin_sha256, compile_log, compile_ms, created_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
ON CONFLICT (cache_key) DO UPDATE SET
  program_name = excluded.program_name, arch = excluded.arch, nvrtc_version = excluded.nvrtc_version,
  options = excluded.options, source_hashes = excluded.source_hashes, cubin = excluded.cubin,
  cubin_bytes = excluded.cubin_bytes, cubin_sha256 = excluded.cubin_sha256,
  compile_log = excluded.compile_log, compile_ms = excluded.compile_ms, created_at = excluded.created_at
)sql";
constexpr std::string_view kInsertKernel =
    "INSERT INTO compile_cache_kernels (cache_key, lowered_name, registers, shared_bytes, spill_stores, "
    "spill_loads, stack_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
constexpr std::string_view kInsertName =
    "INSERT INTO compile_cache_names (cache_key, name_expression, lowered_name) VALUES (?1, ?2, ?3)";

}  // namespace

bool is_sha256_hex(std::string_view text) {
  return text.size() == kSha256HexDigits && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

CompileCache::CompileCache(Database& database) : database_(database) {}

std::optional<CompileRecord> CompileCache::lookup(std::string_view key) {
  return lookup_with_reason(key).record;
}

CompileCacheLookup CompileCache::lookup_with_reason(std::string_view key) {
  require_key(key);
  std::string reason;
  try {
    // One read snapshot, so a concurrent store cannot mix an old row with new kernel rows.
    Transaction snapshot(database_, TransactionMode::deferred);
    auto record = read_row(key);
    snapshot.commit();
    return {std::move(record), {}};
  } catch (MalformedRow const& error) {
    reason = error.what();
  } catch (DatabaseError const& error) {
    if (!is_damaged_row_error(error)) throw;  // locked, I/O error, ...: not this row's fault
    reason = error.what();
  }
  // Delete the untrustworthy row so the caller's recompile replaces it. Racing with another process
  // that just stored a good row under the same key costs at most one recompile.
  try {
    invalidate(key);
  } catch (DatabaseError const& error) {
    reason += "; deleting the row failed too: " + std::string(error.what());
  }
  return {std::nullopt, reason};
}

std::optional<CompileRecord> CompileCache::read_row(std::string_view key) {
  auto row = database_.prepare(kSelectRow);
  row.bind_text(1, key);
  if (!row.step()) return std::nullopt;

  CompileRecord record;
  record.program_name = row.column_text(0);
  record.arch = row.column_text(1);
  record.nvrtc_version = row.column_text(2);
  record.options = row.column_text(3);
  record.source_hashes = row.column_text(4);
  record.cubin = row.column_blob(5);
  std::int64_t const cubin_bytes = row.column_int64(6);
  std::string const checksum = row.column_text(7);
  record.compile_log = row.column_text(8);
  record.compile_ms = row.column_double(9);
  record.created_at = row.column_text(10);

  if (std::cmp_not_equal(record.cubin.size(), cubin_bytes)) {
    throw MalformedRow("CUBIN is " + std::to_string(record.cubin.size()) + " bytes, the row says " +
                       std::to_string(cubin_bytes) + " (truncated or overwritten)");
  }
  if (record.cubin.empty()) throw MalformedRow("empty CUBIN");
  if (common::sha256_hex({record.cubin.data(), record.cubin.size()}) != checksum)
    throw MalformedRow("CUBIN checksum mismatch (corrupt blob)");
  if (!std::isfinite(record.compile_ms) || record.compile_ms < 0) throw MalformedRow("invalid compile time");
  if (record.created_at.empty()) throw MalformedRow("empty creation time");

  auto kernels = database_.prepare(kSelectKernels);
  kernels.bind_text(1, key);
  while (kernels.step()) {
    std::string lowered = kernels.column_text(0);
    KernelResources const resources{kernels.column_int64(1), kernels.column_int64(2), kernels.column_int64(3),
                                    kernels.column_int64(4), kernels.column_int64(5)};
    require_non_negative(resources, lowered);
    record.kernel_resources.emplace(std::move(lowered), resources);
  }
  auto names = database_.prepare(kSelectNames);
  names.bind_text(1, key);
  while (names.step()) {
    std::string expression = names.column_text(0);
    std::string lowered = names.column_text(1);
    if (lowered.empty()) throw MalformedRow("empty lowered name for " + expression);
    record.lowered_names.emplace(std::move(expression), std::move(lowered));
  }
  return record;
}

void CompileCache::store(std::string_view key, CompileRecord const& record) {
  require_key(key);
  if (record.cubin.empty()) throw std::invalid_argument("compile cache: refusing to store an empty CUBIN");
  if (!std::isfinite(record.compile_ms) || record.compile_ms < 0) {
    throw std::invalid_argument("compile cache: compile time must be finite and >= 0, got " +
                                std::to_string(record.compile_ms));
  }
  std::string const checksum = common::sha256_hex(
      {record.cubin.data(), record.cubin.size()});  // outside the write lock: ~1 ms per 200 KiB

  Transaction transaction(database_);
  auto row = database_.prepare(kUpsertRow);
  row.bind_text(1, key)
      .bind_text(2, record.program_name)
      .bind_text(3, record.arch)
      .bind_text(4, record.nvrtc_version)
      .bind_text(5, record.options)
      .bind_text(6, record.source_hashes)
      .bind_blob(7, record.cubin)
      .bind_int64(8, static_cast<std::int64_t>(record.cubin.size()))
      .bind_text(9, checksum)
      .bind_text(10, record.compile_log)
      .bind_double(11, record.compile_ms);
  row.run();

  for (std::string_view table : {"compile_cache_kernels", "compile_cache_names"}) {
    auto clear = database_.prepare("DELETE FROM " + std::string(table) + " WHERE cache_key = ?1");
    clear.bind_text(1, key).run();
  }
  auto kernel = database_.prepare(kInsertKernel);
  for (auto const& [lowered, r] : record.kernel_resources) {
    kernel.bind_text(1, key)
        .bind_text(2, lowered)
        .bind_int64(3, r.registers)
        .bind_int64(4, r.shared_bytes)
        .bind_int64(5, r.spill_stores)
        .bind_int64(6, r.spill_loads)
        .bind_int64(7, r.stack_bytes);
    kernel.run();
    kernel.reset();
  }
  auto name = database_.prepare(kInsertName);
  for (auto const& [expression, lowered] : record.lowered_names) {
    name.bind_text(1, key).bind_text(2, expression).bind_text(3, lowered);
    name.run();
    name.reset();
  }
  transaction.commit();
}

bool CompileCache::invalidate(std::string_view key) {
  require_key(key);
  Transaction transaction(database_);
  auto remove = database_.prepare("DELETE FROM compile_cache WHERE cache_key = ?1");  // children cascade
  remove.bind_text(1, key).run();
  bool const removed = database_.changes() > 0;
  transaction.commit();
  return removed;
}

CompileCacheStats CompileCache::stats() {
  auto query = database_.prepare(
      "SELECT count(*), coalesce(sum(cubin_bytes), 0), coalesce(sum(length(CAST(compile_log AS BLOB))), 0) "
      "FROM compile_cache");
  query.step();
  return {query.column_int64(0), query.column_int64(1), query.column_int64(2)};
}

}  // namespace fl::db
