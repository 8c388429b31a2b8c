#include "db/schema.hpp"

#include <string>

#include "db/integrity.hpp"

namespace fl::db {

SchemaTooNewError::SchemaTooNewError(std::filesystem::path const& path, int found_version, int known_version)
    : UnusableDatabaseError("database " + path.string() + " has schema version " +
                            std::to_string(found_version) + ", newer than the " +
                            std::to_string(known_version) +
                            " this FlashLab knows: update FlashLab or pass --db with another file"),
      found_version_(found_version),
      known_version_(known_version) {}

int current_schema_version() {
  return migrations().empty() ? 0 : migrations().back().version;
}

int schema_version(Database& database) {
  auto statement = database.prepare("PRAGMA user_version");
  statement.step();
  return static_cast<int>(statement.column_int64(0));
}

void migrate(Database& database, int target_version) {
  int const known = current_schema_version();
  if (target_version < 0 || target_version > known) {
    throw std::invalid_argument("schema target version " + std::to_string(target_version) +
                                " is not in [0, " + std::to_string(known) + "]");
  }
  if (int const found = schema_version(database); found > known) {
    throw SchemaTooNewError(database.path(), found, known);
  }
  for (Migration const& migration : migrations()) {
    if (migration.version > target_version) break;
    Transaction transaction(database);
    // Re-read under the write lock: another process may have migrated since we looked.
    int const found = schema_version(database);
    if (found > known) throw SchemaTooNewError(database.path(), found, known);
    if (found >= migration.version) continue;  // the destructor ends the empty transaction
    database.execute(migration.sql);
    // user_version is stored in the database header, which is part of the transaction.
    database.execute("PRAGMA user_version = " + std::to_string(migration.version));
    transaction.commit();
  }
}

void migrate(Database& database) {
  migrate(database, current_schema_version());
}

Database open_database(std::filesystem::path const& path, DatabaseOptions const& options) {
  bool const in_memory = path.empty() || path == ":memory:";
  if (!options.read_only && !in_memory) ensure_intact(path);
  Database database = [&] {
    try {
      return Database(path, options);
    } catch (DatabaseError const& e) {  // a file that cannot hold a database at all: one line, no SQL
      throw unusable_database(path, e);
    }
  }();
  if (options.read_only) {
    int const found = schema_version(database);
    if (found > current_schema_version()) throw SchemaTooNewError(path, found, current_schema_version());
    return database;
  }
  migrate(database);
  return database;
}

}  // namespace fl::db
