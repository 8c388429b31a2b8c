#include "db/database_error.hpp"

#include <utility>

namespace fl::db {
namespace {

std::string describe(int code, std::string const& message, std::string const& sql,
                     std::string const& location) {
  std::string text = message + " (SQLite code " + std::to_string(code) + ")";
  if (!sql.empty()) text += " while running: " + sql;
  if (!location.empty()) text += " [database " + location + "]";
  return text;
}

}  // namespace

DatabaseError::DatabaseError(int code, std::string sqlite_message, std::string sql, std::string location)
    : std::runtime_error(describe(code, sqlite_message, sql, location)),
      code_(code),
      sqlite_message_(std::move(sqlite_message)),
      sql_(std::move(sql)) {}

}  // namespace fl::db
