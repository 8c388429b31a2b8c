#pragma once
// An open SQLite connection, set up the way every FlashLab store wants it (see db/README.md):
// parent directories created, WAL journal, a busy timeout, foreign keys enforced.
//
// A connection belongs to one thread at a time: give each worker thread its own Database on the same
// file (WAL lets readers and one writer proceed together; writers queue on the busy timeout).
// This header also brings Statement and Transaction, the two things one does with a connection.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "db/database_error.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"

struct sqlite3;

namespace fl::db {

// A tuning run's compile pool has one writer per core, each holding the write lock for a few
// milliseconds per store; 10 s of waiting means something is stuck, not busy.
inline constexpr std::chrono::milliseconds kDefaultBusyTimeout{10'000};

struct DatabaseOptions {
  std::chrono::milliseconds busy_timeout = kDefaultBusyTimeout;
  bool read_only = false;
};

class Database {
 public:
  // Opens (creating it and its parent directories if needed) the database at `path`; ":memory:" opens a
  // private in-memory database. Does not touch the schema: use open_database() from db/schema.hpp for
  // a connection whose schema is migrated to the current version.
  explicit Database(std::filesystem::path path, DatabaseOptions const& options = {});
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(Database const&) = delete;
  Database& operator=(Database const&) = delete;

  Statement prepare(std::string_view sql);
  // Runs a script of zero or more statements, no results (schema migrations, PRAGMAs).
  void execute(std::string_view sql);

  std::int64_t last_insert_rowid() const;
  std::int64_t changes() const;  // rows changed by the last INSERT, UPDATE or DELETE
  bool in_transaction() const;   // an explicit transaction is open

  std::filesystem::path const& path() const noexcept { return path_; }
  sqlite3* handle() const noexcept { return connection_; }

 private:
  void close() noexcept;

  sqlite3* connection_ = nullptr;
  std::filesystem::path path_;
};

// Where the database lives when no --db PATH is given: $XDG_CACHE_HOME/flashlab/flashlab.sqlite when
// XDG_CACHE_HOME is set to an absolute path (the XDG spec says to ignore a relative one), else
// $HOME/.cache/flashlab/flashlab.sqlite. Throws std::runtime_error when neither variable helps.
std::filesystem::path default_database_path();

}  // namespace fl::db
