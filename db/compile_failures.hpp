#pragma once
// Compiles that crashed or hung NVRTC (schema v6), by the compile cache's key: a request that killed its
// compile worker once would kill it again, so it is answered from here and never compiled twice.
#include <optional>
#include <string>
#include <string_view>

#include "db/database.hpp"

namespace fl::db {

struct CompileFailure {
  std::string message;  // one line: what happened to the worker
  std::string recorded_at;
};

std::optional<CompileFailure> find_compile_failure(Database& database, std::string_view cache_key);
// Inserts or replaces, in its own transaction.
void store_compile_failure(Database& database, std::string_view cache_key, std::string_view message);

}  // namespace fl::db
