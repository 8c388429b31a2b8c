#include "db/database.hpp"

#include <sqlite3.h>
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <optional>
#include <string>

#include "tests/db/temp_dir.hpp"

using fl::db::Database;
using fl::db::DatabaseError;
using fl::db::test::TempDir;

namespace {

std::string pragma_text(Database& db, std::string const& pragma) {
  auto statement = db.prepare("PRAGMA " + pragma);
  REQUIRE(statement.step());
  return statement.column_type(0) == fl::db::ColumnType::text ? statement.column_text(0)
                                                              : std::to_string(statement.column_int64(0));
}

// Sets an environment variable for one scope and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(char const* name, char const* value) : name_(name) {
    if (char const* old = getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(ScopedEnv const&) = delete;
  ScopedEnv& operator=(ScopedEnv const&) = delete;

 private:
  char const* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("opening creates the file and its parent directories, in WAL mode with foreign keys", "[db]") {
  TempDir dir;
  auto const path = dir / "a/b/c/store.sqlite";
  Database db(path);
  CHECK(std::filesystem::exists(path));
  CHECK(pragma_text(db, "journal_mode") == "wal");
  CHECK(pragma_text(db, "foreign_keys") == "1");
  CHECK(pragma_text(db, "busy_timeout") == std::to_string(fl::db::kDefaultBusyTimeout.count()));
  CHECK(db.path() == path);
}

TEST_CASE("a file that is not a database is a DatabaseError naming the file", "[db]") {
  TempDir dir;
  auto const path = dir / "not_a_db.sqlite";
  std::ofstream(path) << "this is a text file, long enough to have a header that is not SQLite's at all\n";
  try {
    Database db(path);
    FAIL("opened a text file as a database");
  } catch (DatabaseError const& error) {
    CHECK(error.primary_code() == SQLITE_NOTADB);
    CHECK_THAT(error.what(), Catch::Contains(path.string()));
  }
}

TEST_CASE("a failed statement's error carries SQLite's message, and the SQL only in sql()", "[db]") {
  Database db(":memory:");
  std::string const bad_sql = "SELEKT 1";
  try {
    db.prepare(bad_sql);
    FAIL("prepared invalid SQL");
  } catch (DatabaseError const& error) {
    CHECK(error.sql() == bad_sql);
    CHECK_THAT(error.sqlite_message(), Catch::Contains("syntax error"));
    CHECK_THAT(error.what(), !Catch::Contains(bad_sql));  // what() is what users see
  }
  CHECK_THROWS_AS(db.execute("CREATE TABLE t (x); CREATE TABLE t (x)"), DatabaseError);
}

TEST_CASE("default_database_path follows XDG_CACHE_HOME, then HOME", "[db]") {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg/cache");
    ScopedEnv home("HOME", "/home/someone");
    CHECK(fl::db::default_database_path() == "/xdg/cache/flashlab/flashlab.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/someone");
    CHECK(fl::db::default_database_path() == "/home/someone/.cache/flashlab/flashlab.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/cache");  // the XDG spec: ignore a relative path
    ScopedEnv home("HOME", "/home/someone");
    CHECK(fl::db::default_database_path() == "/home/someone/.cache/flashlab/flashlab.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    CHECK_THROWS_WITH(fl::db::default_database_path(), Catch::Contains("--db PATH"));
  }
}
