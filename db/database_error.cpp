#include "db/database_error.hpp"

#include <utility>

namespace fl::db {
namespace {

// One line for the user: the file and what SQLite said. The SQL stays in sql() for whoever debugs it: a
// conflicting table printed 34 lines of schema into a command's error.
std::string describe(int code, std::string const& message, std::string const& location) {
  std::string text = location.empty() ? message : "database " + location + ": " + message;
  return text + " (SQLite code " + std::to_string(code) + ")";
}

}  // namespace

DatabaseError::DatabaseError(int code, std::string sqlite_message, std::string sql, std::string location)
    : std::runtime_error(describe(code, sqlite_message, location)),
      code_(code),
      sqlite_message_(std::move(sqlite_message)),
      sql_(std::move(sql)) {}

}  // namespace fl::db
