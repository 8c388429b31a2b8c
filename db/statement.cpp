#include "db/statement.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <utility>

#include "db/database_error.hpp"

namespace fl::db {
namespace {

std::string database_location(sqlite3* connection) {
  char const* file = connection != nullptr ? sqlite3_db_filename(connection, "main") : nullptr;
  return (file == nullptr || *file == '\0') ? std::string(":memory:") : std::string(file);
}

bool only_whitespace_or_semicolons(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ';' || c == ' ' || c == '\n' || c == '\t' || c == '\r'; });
}

}  // namespace

std::string_view name(ColumnType type) {
  switch (type) {
    case ColumnType::integer:
      return "INTEGER";
    case ColumnType::real:
      return "REAL";
    case ColumnType::text:
      return "TEXT";
    case ColumnType::blob:
      return "BLOB";
    case ColumnType::null:
      return "NULL";
  }
  return "unknown";
}

Statement::Statement(sqlite3* connection, std::string_view sql) : connection_(connection), sql_(sql) {
  char const* tail = nullptr;
  int const rc =
      sqlite3_prepare_v2(connection_, sql_.data(), static_cast<int>(sql_.size()), &statement_, &tail);
  if (rc != SQLITE_OK) fail(rc);
  if (statement_ == nullptr) {
    throw DatabaseError(SQLITE_MISUSE, "no SQL statement to prepare", sql_, database_location(connection_));
  }
  std::string_view const rest(tail, static_cast<std::size_t>(sql_.data() + sql_.size() - tail));
  if (!only_whitespace_or_semicolons(rest)) {
    sqlite3_finalize(statement_);
    statement_ = nullptr;
    throw DatabaseError(SQLITE_MISUSE, "more than one SQL statement given to prepare", sql_,
                        database_location(connection_));
  }
}

Statement::~Statement() {
  if (statement_ != nullptr) sqlite3_finalize(statement_);
}

Statement::Statement(Statement&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)),
      statement_(std::exchange(other.statement_, nullptr)),
      sql_(std::move(other.sql_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (statement_ != nullptr) sqlite3_finalize(statement_);
    connection_ = std::exchange(other.connection_, nullptr);
    statement_ = std::exchange(other.statement_, nullptr);
    sql_ = std::move(other.sql_);
  }
  return *this;
}

void Statement::fail(int code) const {
  throw DatabaseError(code, sqlite3_errmsg(connection_), sql_, database_location(connection_));
}

void Statement::check_bind(int code) const {
  if (code != SQLITE_OK) fail(code);
}

Statement& Statement::bind_int64(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(statement_, index, value));
  return *this;
}

Statement& Statement::bind_double(int index, double value) {
  check_bind(sqlite3_bind_double(statement_, index, value));
  return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
  check_bind(
      sqlite3_bind_text64(statement_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind_blob(int index, std::span<char const> value) {
  // SQLite binds a null pointer as NULL, so an empty blob needs bind_zeroblob to stay a BLOB.
  int const rc = value.empty()
                     ? sqlite3_bind_zeroblob(statement_, index, 0)
                     : sqlite3_bind_blob64(statement_, index, value.data(), value.size(), SQLITE_TRANSIENT);
  check_bind(rc);
  return *this;
}

Statement& Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(statement_, index));
  return *this;
}

Statement& Statement::bind_optional_double(int index, std::optional<double> value) {
  return value ? bind_double(index, *value) : bind_null(index);
}

Statement& Statement::bind_optional_text(int index, std::optional<std::string_view> value) {
  return value ? bind_text(index, *value) : bind_null(index);
}

int Statement::parameter_index(std::string_view parameter) const {
  int const index = sqlite3_bind_parameter_index(statement_, std::string(parameter).c_str());
  if (index == 0) {
    throw DatabaseError(SQLITE_RANGE, "no parameter named " + std::string(parameter), sql_,
                        database_location(connection_));
  }
  return index;
}

bool Statement::step() {
  int const rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(rc);
}

void Statement::run() {
  if (step()) {
    throw DatabaseError(SQLITE_MISUSE, "statement returned a row where none was expected", sql_,
                        database_location(connection_));
  }
}

void Statement::reset(bool clear_bindings) {
  sqlite3_reset(statement_);  // its return code repeats the last step's error, already reported
  if (clear_bindings) sqlite3_clear_bindings(statement_);
}

int Statement::column_count() const {
  return sqlite3_column_count(statement_);
}

ColumnType Statement::column_type(int column) const {
  switch (sqlite3_column_type(statement_, column)) {
    case SQLITE_INTEGER:
      return ColumnType::integer;
    case SQLITE_FLOAT:
      return ColumnType::real;
    case SQLITE_TEXT:
      return ColumnType::text;
    case SQLITE_BLOB:
      return ColumnType::blob;
    default:
      return ColumnType::null;
  }
}

void Statement::expect_type(int column, ColumnType expected) const {
  ColumnType const actual = column_type(column);
  if (actual == expected) return;
  char const* column_name = sqlite3_column_name(statement_, column);
  throw DatabaseError(SQLITE_MISMATCH,
                      "column " + std::to_string(column) + " (" + (column_name ? column_name : "?") +
                          ") holds " + std::string(name(actual)) + ", expected " +
                          std::string(name(expected)),
                      sql_, database_location(connection_));
}

std::int64_t Statement::column_int64(int column) const {
  expect_type(column, ColumnType::integer);
  return sqlite3_column_int64(statement_, column);
}

double Statement::column_double(int column) const {
  if (column_type(column) == ColumnType::integer)
    return static_cast<double>(sqlite3_column_int64(statement_, column));
  expect_type(column, ColumnType::real);
  return sqlite3_column_double(statement_, column);
}

std::string Statement::column_text(int column) const {
  expect_type(column, ColumnType::text);
  auto const* text = sqlite3_column_text(statement_, column);
  auto const bytes = static_cast<std::size_t>(sqlite3_column_bytes(statement_, column));
  return std::string(reinterpret_cast<char const*>(text), bytes);
}

std::vector<char> Statement::column_blob(int column) const {
  expect_type(column, ColumnType::blob);
  auto const* data = static_cast<char const*>(sqlite3_column_blob(statement_, column));
  auto const bytes = static_cast<std::size_t>(sqlite3_column_bytes(statement_, column));
  if (data == nullptr || bytes == 0) return {};
  return std::vector<char>(data, data + bytes);
}

std::optional<std::int64_t> Statement::column_optional_int64(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_int64(column);
}

std::optional<double> Statement::column_optional_double(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_double(column);
}

std::optional<std::string> Statement::column_optional_text(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_text(column);
}

}  // namespace fl::db
