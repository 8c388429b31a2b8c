// A database that cannot be trusted is never used as if it could (db/integrity.hpp): unusable files are
// one line naming them; a file damaged inside is moved aside and its rows salvaged into a fresh one.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "db/compile_cache.hpp"
#include "db/integrity.hpp"
#include "db/schema.hpp"
#include "db/transaction.hpp"
#include "db/tuning_runs.hpp"
#include "db/tuning_store.hpp"
#include "tests/db/compile_cache_fixture.hpp"
#include "tests/db/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace fl::db;
using fl::db::test::TempDir;

namespace {

constexpr int kTuningRuns = 40;
constexpr int kCachedPrograms = 40;
constexpr std::size_t kCubinBytes = 16 * 1024;  // 40 of these fill the file's second half

std::int64_t count_rows(Database& database, std::string const& table) {
  auto statement = database.prepare("SELECT count(*) FROM " + table);
  statement.step();
  return statement.column_int64(0);
}

// Tuning runs first (the early pages), then compile-cache CUBINs (the later ones); closed, so the WAL is
// checkpointed into the file.
void fill(fs::path const& path) {
  Database database = open_database(path);
  for (int i = 0; i < kTuningRuns; ++i) begin_tuning_run(database, "fa-tune --run " + std::to_string(i));
  CompileCache cache(database);
  for (int i = 0; i < kCachedPrograms; ++i)
    cache.store(fl::db::test::key_for(std::uint32_t(i)),
                fl::db::test::make_record(kCubinBytes, std::uint32_t(i)));
}

void scribble(fs::path const& path, double at_fraction, std::size_t bytes) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(std::streamoff(double(fs::file_size(path)) * at_fraction));
  file << std::string(bytes, '\xde');
}

std::int64_t page_size_of(Database& database) {
  auto size = database.prepare("PRAGMA page_size");
  size.step();
  return size.column_int64(0);
}

// The first B-tree leaf page of `kind` (0x0D a table leaf, 0x0A an index or WITHOUT ROWID leaf: the page's
// first byte) at or after page `from` (0-based): a damaged leaf loses its own rows only, a damaged interior
// page every row below it (salvage seeks through the tree, it does not read pages one by one).
std::int64_t leaf_page_from(fs::path const& path, std::int64_t from, std::int64_t page_size, char kind) {
  std::ifstream file(path, std::ios::binary);
  for (std::int64_t page = from;; ++page) {
    file.seekg(std::streamoff(page * page_size));
    char type = 0;
    if (!file.get(type)) return -1;
    if (type == kind) return page;
  }
}

// Overwrites page `page` (0-based) of the file whole: SQLite reports SQLITE_CORRUPT on reaching it.
void overwrite_page(fs::path const& path, std::int64_t page, std::int64_t page_size) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(std::streamoff(page * page_size));
  file << std::string(std::size_t(page_size), '\xde');
}

fs::path only_file_starting(fs::path const& dir, std::string const& prefix) {
  fs::path found;
  for (auto const& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().starts_with(prefix)) found = entry.path();
  return found;
}

}  // namespace

TEST_CASE("a folder, a file that is not SQLite, a damaged header: one line naming the file",
          "[db][integrity]") {
  TempDir dir;
  fs::create_directories(dir / "folder.sqlite");
  CHECK_THROWS_WITH(open_database(dir / "folder.sqlite"),
                    Catch::Contains((dir / "folder.sqlite").string()) && Catch::Contains("is a folder"));
  std::ofstream(dir / "text.sqlite") << std::string(4096, 'x');
  CHECK_THROWS_AS(open_database(dir / "text.sqlite"), UnusableDatabaseError);
  CHECK_THROWS_WITH(open_database(dir / "text.sqlite"), Catch::Contains("is not a SQLite database"));
  // No SQL in any of these lines (a conflicting table once printed 34 lines of schema).
  try {
    open_database(dir / "text.sqlite");
  } catch (std::exception const& e) {
    CHECK(std::string(e.what()).find("PRAGMA") == std::string::npos);
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}

TEST_CASE("a database damaged in its middle is moved aside, its runs salvaged, the cache rebuilt",
          "[db][integrity]") {
  TempDir dir;
  auto const path = dir / "flashlab.sqlite";
  fill(path);
  scribble(path, 0.6, 8192);  // inside the compile cache's pages
  // Without the check this database answered lookups with "database disk image is malformed", which
  // fa-tune reported as rejected configs, exit 0.
  Database database = open_database(path);
  CHECK(count_rows(database, "tuning_runs") == kTuningRuns);
  CHECK(count_rows(database, "compile_cache") == 0);  // derivable: recompiled, never copied
  fs::path const kept = only_file_starting(dir.path(), "flashlab.sqlite.corrupt-");
  REQUIRE(!kept.empty());
  CHECK(fs::file_size(kept) > 0);
  CHECK(!fs::exists(kept.string() + "-shm"));
  auto check = database.prepare("PRAGMA quick_check");
  REQUIRE(check.step());
  CHECK(check.column_text(0) == "ok");
  // The fresh file is a working database: writes go on.
  CompileCache cache(database);
  cache.store(fl::db::test::key_for(999), fl::db::test::make_record(64, 999));
  CHECK(cache.lookup(fl::db::test::key_for(999)).has_value());
}

TEST_CASE("an intact database is checked once per process and left alone", "[db][integrity]") {
  TempDir dir;
  auto const path = dir / "ok.sqlite";
  fill(path);
  Database first = open_database(path);
  Database second = open_database(path);
  CHECK(count_rows(second, "tuning_runs") == kTuningRuns);
  CHECK(count_rows(second, "compile_cache") == kCachedPrograms);
  CHECK(only_file_starting(dir.path(), "ok.sqlite.corrupt-").empty());
}

TEST_CASE("salvage reads past a damaged page in the middle of a table: every readable row is kept",
          "[db][integrity]") {
  TempDir dir;
  auto const path = dir / "runs.sqlite";
  constexpr int kRuns = 3000;  // ~170 pages of 4 KiB: the file's middle page is one of their leaves
  std::int64_t page_size = 0;
  {
    Database database = open_database(path);
    Transaction transaction(database);
    auto insert = database.prepare("INSERT INTO tuning_runs (run_id, started_at, command) VALUES (?, ?, ?)");
    for (int i = 1; i <= kRuns; ++i) {
      insert.reset();
      insert.bind_int64(1, i).bind_text(2, "2026-12-01T11:00:00Z");
      insert.bind_text(3, "fa-tune --run " + std::to_string(i) + " " + std::string(180, 'x')).run();
    }
    transaction.commit();
    page_size = page_size_of(database);
  }
  std::int64_t const leaf =
      leaf_page_from(path, std::int64_t(fs::file_size(path)) / page_size / 2, page_size, 0x0D);
  REQUIRE(leaf > 0);
  overwrite_page(path, leaf, page_size);    // a leaf of tuning_runs in the file's middle
  Database database = open_database(path);  // quick_check fails: salvaged
  REQUIRE_FALSE(only_file_starting(dir.path(), "runs.sqlite.corrupt-").empty());
  std::int64_t const kept = count_rows(database, "tuning_runs");
  int const rows_per_page = int(page_size / 200);
  CHECK(kept < kRuns);                       // the damaged page's rows are gone
  CHECK(kept >= kRuns - 2 * rows_per_page);  // and only those: the copy resumed past it
  auto last = database.prepare("SELECT max(run_id) FROM tuning_runs");
  REQUIRE(last.step());
  CHECK(last.column_int64(0) == kRuns);  // rows after the damage (before: the copy stopped at it)
}

TEST_CASE("salvage of a WITHOUT ROWID table resumes past a damaged page by its first key column",
          "[db][integrity]") {
  TempDir dir;
  auto const path = dir / "mutants.sqlite";
  constexpr int kRuns = 1500;  // mutation_results keyed (run_id, mutant_id), two rows per run
  std::int64_t page_size = 0;
  {
    Database database = open_database(path);
    Transaction transaction(database);
    auto run = database.prepare(
        "INSERT INTO mutation_runs (run_id, started_at, command, target, family, dtype) VALUES (?, ?, ?, "
        "'cpu', "
        "'fa2', 'bf16')");
    for (int i = 1; i <= kRuns; ++i) {
      run.reset();
      run.bind_int64(1, i).bind_text(2, "2026-12-01T11:00:00Z").bind_text(3, "fa-mutate").run();
    }
    auto result = database.prepare(
        "INSERT INTO mutation_results (run_id, mutant_id, outcome, note) VALUES (?, ?, 'survived', ?)");
    for (int i = 1; i <= kRuns; ++i)
      for (char const* id : {"unrescaled-o", "stale-max"}) {
        result.reset();
        result.bind_int64(1, i).bind_text(2, id).bind_text(3, std::string(90, 'n')).run();
      }
    transaction.commit();
    page_size = page_size_of(database);
  }
  // mutation_runs fills the first ~30 pages, mutation_results the rest: damage a leaf three quarters in.
  std::int64_t const leaf =
      leaf_page_from(path, std::int64_t(fs::file_size(path)) / page_size * 3 / 4, page_size, 0x0A);
  REQUIRE(leaf > 0);
  overwrite_page(path, leaf, page_size);
  Database database = open_database(path);
  std::int64_t const kept = count_rows(database, "mutation_results");
  CHECK(kept < 2 * kRuns);
  CHECK(kept >= 2 * kRuns - 2 * int(page_size / 100));
  auto last = database.prepare("SELECT max(run_id) FROM mutation_results");
  REQUIRE(last.step());
  CHECK(last.column_int64(0) == kRuns);
}
