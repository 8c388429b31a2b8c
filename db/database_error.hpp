#pragma once
// The one exception type of db/: a failed SQLite call, carrying what SQLite said and the SQL that failed.
// what() is one line without the SQL (users read it); sql() keeps the statement for debugging.
#include <stdexcept>
#include <string>

namespace fl::db {

class DatabaseError : public std::runtime_error {
 public:
  // `code` is SQLite's extended result code (SQLITE_BUSY, SQLITE_CORRUPT, ...); `location` names the
  // database file (or is empty when unknown).
  DatabaseError(int code, std::string sqlite_message, std::string sql, std::string location = {});

  int code() const noexcept { return code_; }
  // The primary result code (the low byte), for comparisons with SQLITE_CORRUPT etc.
  int primary_code() const noexcept { return code_ & kPrimaryCodeMask; }
  std::string const& sqlite_message() const noexcept { return sqlite_message_; }
  std::string const& sql() const noexcept { return sql_; }

 private:
  static constexpr int kPrimaryCodeMask = 0xff;  // SQLite: extended code = primary | (detail << 8)
  int code_;
  std::string sqlite_message_;
  std::string sql_;
};

}  // namespace fl::db
