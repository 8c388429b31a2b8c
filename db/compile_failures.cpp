#include "db/compile_failures.hpp"

#include "db/transaction.hpp"
#include "db/tuning_store.hpp"

namespace fl::db {

std::optional<CompileFailure> find_compile_failure(Database& database, std::string_view cache_key) {
  auto row = database.prepare("SELECT message, recorded_at FROM compile_failures WHERE cache_key = ?");
  row.bind_text(1, cache_key);
  if (!row.step()) return std::nullopt;
  return CompileFailure{row.column_text(0), row.column_text(1)};
}

void store_compile_failure(Database& database, std::string_view cache_key, std::string_view message) {
  Transaction transaction(database);
  auto row = database.prepare(
      "INSERT INTO compile_failures (cache_key, message, recorded_at) VALUES (?, ?, ?) "
      "ON CONFLICT (cache_key) DO UPDATE SET message = excluded.message, recorded_at = excluded.recorded_at");
  row.bind_text(1, cache_key).bind_text(2, message).bind_text(3, utc_timestamp());
  row.run();
  transaction.commit();
}

}  // namespace fl::db
