#pragma once
// The compile cache: CUBINs and their compile results, keyed by a hex SHA-256 that runtime/ computes from
// every input that can change the compile (kernels_src source hashes, options, defines, arch, NVRTC
// version). This module never computes keys: it stores and returns what it is given, and guards the
// value with a checksum.
//
// A row that fails to load (checksum mismatch, truncated blob, malformed field) is deleted and reported
// as a miss: the caller recompiles and stores again. It is never an exception and never a crash.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "db/compile_record.hpp"
#include "db/database.hpp"

namespace fl::db {

struct CompileCacheStats {
  std::int64_t rows = 0;
  std::int64_t cubin_bytes = 0;  // sum of CUBIN sizes
  std::int64_t log_bytes = 0;    // sum of compile log sizes
};

struct CompileCacheLookup {
  std::optional<CompileRecord> record;  // empty on a miss
  // Why a row that was there was not returned (and deleted), e.g. "CUBIN checksum mismatch"; empty on a
  // hit or a plain miss. For the caller's log line.
  std::string discarded_because;
};

class CompileCache {
 public:
  // The database must be at the current schema version (open_database). Keeps a reference to it.
  explicit CompileCache(Database& database);

  // Keys are 64 lowercase hex digits; anything else throws std::invalid_argument (a caller's bug).
  std::optional<CompileRecord> lookup(std::string_view key);
  CompileCacheLookup lookup_with_reason(std::string_view key);

  // Inserts or replaces the row for `key` in one transaction (a savepoint inside a caller's one).
  // record.created_at is ignored: the row gets the current UTC time.
  void store(std::string_view key, CompileRecord const& record);

  // Removes the row, e.g. when its CUBIN fails to load on the GPU; true when there was one.
  bool invalidate(std::string_view key);

  CompileCacheStats stats();

 private:
  std::optional<CompileRecord> read_row(std::string_view key);

  Database& database_;
};

// True for 64 lowercase hex digits: the form of every key and checksum in the cache.
bool is_sha256_hex(std::string_view text);

}  // namespace fl::db
