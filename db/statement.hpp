#pragma once
// A prepared SQLite statement with typed binds and typed, checked column reads.
//
// Parameters are numbered from 1 and columns from 0, as SQLite numbers them. A column read checks the
// stored type: reading TEXT as an integer, or NULL as anything, throws DatabaseError with code
// SQLITE_MISMATCH instead of silently converting, so a malformed row is noticed where it is read.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace fl::db {

enum class ColumnType { integer, real, text, blob, null };

class Statement {
 public:
  // Prepares exactly one SQL statement; trailing text other than whitespace or ';' is an error.
  Statement(sqlite3* connection, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(Statement const&) = delete;
  Statement& operator=(Statement const&) = delete;

  Statement& bind_int64(int index, std::int64_t value);
  Statement& bind_double(int index, double value);
  Statement& bind_text(int index, std::string_view value);
  Statement& bind_blob(int index, std::span<char const> value);
  Statement& bind_null(int index);
  Statement& bind_optional_double(int index, std::optional<double> value);
  Statement& bind_optional_text(int index, std::optional<std::string_view> value);
  // The index of a named parameter (":key", "@key", "$key"); throws when the statement has none such.
  int parameter_index(std::string_view name) const;

  // Runs one step: true when a row is available to read, false when the statement is done.
  bool step();
  // Steps to the end; throws if the statement produced a row (use step() for queries).
  void run();
  // Makes the statement ready to run again; keeps bindings unless `clear_bindings`.
  void reset(bool clear_bindings = true);

  int column_count() const;
  ColumnType column_type(int column) const;
  bool column_is_null(int column) const { return column_type(column) == ColumnType::null; }
  std::int64_t column_int64(int column) const;
  double column_double(int column) const;  // INTEGER columns are widened, as SQLite stores 1.0 as 1
  std::string column_text(int column) const;
  std::vector<char> column_blob(int column) const;  // a zero-length BLOB reads as empty
  std::optional<std::int64_t> column_optional_int64(int column) const;
  std::optional<double> column_optional_double(int column) const;
  std::optional<std::string> column_optional_text(int column) const;

  std::string const& sql() const noexcept { return sql_; }
  sqlite3_stmt* handle() const noexcept { return statement_; }

 private:
  [[noreturn]] void fail(int code) const;
  void check_bind(int code) const;
  void expect_type(int column, ColumnType expected) const;

  sqlite3* connection_ = nullptr;
  sqlite3_stmt* statement_ = nullptr;
  std::string sql_;
};

std::string_view name(ColumnType type);

}  // namespace fl::db
