#include "db/database.hpp"

#include <sqlite3.h>

#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace fl::db {
namespace {

bool is_memory(std::filesystem::path const& path) {
  return path.empty() || path == ":memory:";
}

std::string location(std::filesystem::path const& path) {
  return is_memory(path) ? std::string(":memory:") : path.string();
}

}  // namespace

Database::Database(std::filesystem::path path, DatabaseOptions const& options) : path_(std::move(path)) {
  if (!is_memory(path_) && !options.read_only && path_.has_parent_path()) {
    std::error_code error;
    std::filesystem::create_directories(path_.parent_path(), error);
    if (error) {
      throw DatabaseError(SQLITE_CANTOPEN,
                          "cannot create directory " + path_.parent_path().string() + ": " + error.message(),
                          {}, location(path_));
    }
  }
  int const flags = options.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  std::string const file = is_memory(path_) ? std::string(":memory:") : path_.string();
  int const rc = sqlite3_open_v2(file.c_str(), &connection_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = connection_ != nullptr ? sqlite3_errmsg(connection_) : sqlite3_errstr(rc);
    close();
    throw DatabaseError(rc, std::move(message), "open", location(path_));
  }
  sqlite3_extended_result_codes(connection_, 1);
  try {
    sqlite3_busy_timeout(connection_, static_cast<int>(options.busy_timeout.count()));
    // The first statement reads the header: a file that is not a database fails here, clearly.
    execute("PRAGMA foreign_keys = ON");
    if (!options.read_only) {
      // WAL: readers never block the writer, and a commit is one append, so a killed process leaves
      // every committed transaction and no partial one. NORMAL sync is durable across a process crash
      // (only a power loss can drop the last commits), and spares an fsync per commit.
      execute("PRAGMA journal_mode = WAL");
      execute("PRAGMA synchronous = NORMAL");
    }
  } catch (...) {
    close();
    throw;
  }
}

Database::~Database() {
  close();
}

Database::Database(Database&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    close();
    connection_ = std::exchange(other.connection_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void Database::close() noexcept {
  // sqlite3_close_v2 defers the close until every statement is finalised, so a leaked Statement
  // cannot make the close fail.
  if (connection_ != nullptr) sqlite3_close_v2(connection_);
  connection_ = nullptr;
}

Statement Database::prepare(std::string_view sql) {
  return Statement(connection_, sql);
}

void Database::execute(std::string_view sql) {
  std::string const script(sql);
  char* message = nullptr;
  int const rc = sqlite3_exec(connection_, script.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw DatabaseError(sqlite3_extended_errcode(connection_), std::move(text), script, location(path_));
  }
}

std::int64_t Database::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(connection_);
}

std::int64_t Database::changes() const {
  return sqlite3_changes64(connection_);
}

bool Database::in_transaction() const {
  return sqlite3_get_autocommit(connection_) == 0;
}

std::filesystem::path default_database_path() {
  std::filesystem::path const relative = std::filesystem::path("flashlab") / "flashlab.sqlite";
  if (char const* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr) {
    std::filesystem::path const base(xdg);
    if (base.is_absolute()) return base / relative;
  }
  if (char const* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::filesystem::path(home) / ".cache" / relative;
  }
  throw std::runtime_error(
      "no cache directory: neither XDG_CACHE_HOME (absolute) nor HOME is set; pass --db PATH");
}

}  // namespace fl::db
