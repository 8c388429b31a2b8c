#pragma once
// The schema's version and its migrations.
//
// The version lives in the database header (PRAGMA user_version). Migration N takes a database at
// version N-1 to version N in one transaction, so a database is always at some exact version: opening
// an older one applies the missing migrations in order; opening a newer one (written by a newer
// FlashLab) is refused with SchemaTooNewError rather than guessed at. A migration, once merged to main,
// never changes: tests/db/data/schema_v<N>.sql pins what each version looks like (see db/README.md).
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "db/database.hpp"
#include "db/integrity.hpp"

namespace fl::db {

struct Migration {
  int version;                   // the version this migration produces
  std::string_view description;  // one line, for humans and error messages
  std::string_view sql;          // the script; must not BEGIN/COMMIT itself
};

// Every migration, in order: migrations()[i].version == i + 1 (defined in db/migrations.cpp).
std::span<Migration const> migrations();

// The version this code creates and understands.
int current_schema_version();

class SchemaTooNewError : public UnusableDatabaseError {
 public:
  SchemaTooNewError(std::filesystem::path const& path, int found_version, int known_version);
  int found_version() const noexcept { return found_version_; }
  int known_version() const noexcept { return known_version_; }

 private:
  int found_version_;
  int known_version_;
};

int schema_version(Database& database);

// Applies the migrations from the database's version up to `target_version` (default: the current
// one), each in its own transaction. Safe against a second process migrating the same file at the same
// time: the version is re-read under the write lock. Throws SchemaTooNewError when the database is
// newer than `current_schema_version()`, std::invalid_argument for a target outside [0, current].
// A target below the database's version is not a downgrade: nothing happens.
void migrate(Database& database, int target_version);
void migrate(Database& database);

// A connection with its schema at the current version: what every command opens. Opened for writing, the
// file is checked first (db/integrity.hpp: a damaged one is salvaged, an unusable one throws
// UnusableDatabaseError, one line naming it).
Database open_database(std::filesystem::path const& path, DatabaseOptions const& options = {});

// The schema as canonical text: every table, index, view and trigger from sqlite_master (SQLite's
// internal objects left out) sorted by type and name, each statement's SQL with comments removed and
// whitespace collapsed, followed by the user_version. Two databases with equal dumps have the same
// schema; the golden files in tests/db/data are such dumps.
std::string schema_dump(Database& database);

}  // namespace fl::db
