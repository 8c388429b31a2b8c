#include "db/transaction.hpp"

#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <stdexcept>

#include "db/database.hpp"
#include "tests/db/temp_dir.hpp"

using fl::db::Database;
using fl::db::DatabaseError;
using fl::db::Transaction;

namespace {

std::int64_t count_rows(Database& db) {
  auto statement = db.prepare("SELECT count(*) FROM t");
  statement.step();
  return statement.column_int64(0);
}

void insert(Database& db, std::int64_t value) {
  db.prepare("INSERT INTO t VALUES (?1)").bind_int64(1, value).run();
}

}  // namespace

TEST_CASE("a transaction left by an exception is rolled back", "[db][transaction]") {
  Database db(":memory:");
  db.execute("CREATE TABLE t (x INTEGER)");
  auto write_then_throw = [&] {
    Transaction transaction(db);
    insert(db, 1);
    insert(db, 2);
    throw std::runtime_error("failure in the middle");
  };
  CHECK_THROWS_AS(write_then_throw(), std::runtime_error);
  CHECK(count_rows(db) == 0);
  CHECK_FALSE(db.in_transaction());

  {
    Transaction transaction(db);
    insert(db, 3);
    transaction.commit();
  }
  CHECK(count_rows(db) == 1);
}

TEST_CASE("a transaction inside a transaction is a savepoint", "[db][transaction]") {
  Database db(":memory:");
  db.execute("CREATE TABLE t (x INTEGER)");
  {
    Transaction outer(db);
    insert(db, 1);
    {
      Transaction inner(db);
      CHECK(inner.is_savepoint());
      insert(db, 2);
    }  // inner rolled back, outer's row stays
    CHECK(count_rows(db) == 1);
    {
      Transaction inner(db);
      insert(db, 3);
      inner.commit();
    }
    outer.commit();
  }
  CHECK(count_rows(db) == 2);
  {
    Transaction outer(db);
    {
      Transaction inner(db);
      insert(db, 4);
      inner.commit();
    }
  }  // the outer rollback undoes the committed savepoint too
  CHECK(count_rows(db) == 2);
}

TEST_CASE("BEGIN IMMEDIATE takes the write lock up front", "[db][transaction]") {
  fl::db::test::TempDir dir;
  Database first(dir / "lock.sqlite");
  first.execute("CREATE TABLE t (x INTEGER)");
  Database second(dir / "lock.sqlite", {.busy_timeout = std::chrono::milliseconds(0), .read_only = false});
  Transaction holding(first);
  try {
    Transaction competing(second);
    FAIL("two immediate transactions at once");
  } catch (DatabaseError const& error) {
    CHECK(error.primary_code() == SQLITE_BUSY);
  }
  // Readers are not blocked under WAL.
  CHECK(count_rows(second) == 0);
}
