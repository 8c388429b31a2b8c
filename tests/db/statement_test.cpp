#include "db/statement.hpp"

#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "db/database.hpp"

using fl::db::ColumnType;
using fl::db::Database;
using fl::db::DatabaseError;

TEST_CASE("typed binds and columns round-trip every type exactly", "[db]") {
  Database db(":memory:");
  db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, e BLOB, n TEXT)");
  std::string const text("with\0nul", 8);
  std::vector<char> const blob = {'\0', '\x7f', '\x80', '\xff', '\0'};
  auto insert = db.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  for (std::int64_t value : {std::numeric_limits<std::int64_t>::min(), std::int64_t{0},
                             std::numeric_limits<std::int64_t>::max()}) {
    insert.bind_int64(1, value).bind_double(2, 0.1).bind_text(3, text).bind_blob(4, blob);
    insert.bind_blob(5, std::vector<char>{}).bind_null(6);
    insert.run();
    insert.reset();
  }
  auto select = db.prepare("SELECT i, r, s, b, e, n FROM t ORDER BY i");
  std::vector<std::int64_t> read;
  while (select.step()) {
    read.push_back(select.column_int64(0));
    CHECK(select.column_double(1) == 0.1);
    CHECK(select.column_text(2) == text);
    CHECK(select.column_blob(3) == blob);
    CHECK(select.column_type(4) == ColumnType::blob);  // an empty blob stays a BLOB, not NULL
    CHECK(select.column_blob(4).empty());
    CHECK(select.column_is_null(5));
    CHECK_FALSE(select.column_optional_text(5).has_value());
    CHECK(select.column_optional_int64(0) == read.back());
  }
  CHECK(read == std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), 0,
                                          std::numeric_limits<std::int64_t>::max()});
}

TEST_CASE("reading a column as the wrong type is an error, not a conversion", "[db]") {
  Database db(":memory:");
  auto select = db.prepare("SELECT 'text', NULL, 2.5, 7");
  REQUIRE(select.step());
  try {
    select.column_int64(0);
    FAIL("read TEXT as an integer");
  } catch (DatabaseError const& error) {
    CHECK(error.primary_code() == SQLITE_MISMATCH);
  }
  CHECK_THROWS_AS(select.column_text(1), DatabaseError);
  CHECK_THROWS_AS(select.column_int64(2), DatabaseError);
  CHECK_THROWS_AS(select.column_blob(0), DatabaseError);
  CHECK(select.column_double(3) == 7.0);  // integers widen to double: SQLite stores 7.0 as 7
}

TEST_CASE("prepare refuses a second statement instead of ignoring it", "[db]") {
  Database db(":memory:");
  CHECK_THROWS_AS(db.prepare("SELECT 1; SELECT 2"), DatabaseError);
  CHECK_NOTHROW(db.prepare("SELECT 1;  \n"));
}

TEST_CASE("named parameters resolve to their index", "[db]") {
  Database db(":memory:");
  auto select = db.prepare("SELECT :a + :b");
  select.bind_int64(select.parameter_index(":a"), 2).bind_int64(select.parameter_index(":b"), 3);
  REQUIRE(select.step());
  CHECK(select.column_int64(0) == 5);
  CHECK_THROWS_AS(select.parameter_index(":missing"), DatabaseError);
}

TEST_CASE("run() refuses a statement that returns rows", "[db]") {
  Database db(":memory:");
  auto select = db.prepare("SELECT 1");
  CHECK_THROWS_AS(select.run(), DatabaseError);
}
