#include "db/integrity.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "db/database.hpp"
#include "db/schema.hpp"

namespace fl::db {

namespace {

namespace fs = std::filesystem;

// Derivable tables: rebuilt by recompiling, never copied out of a damaged file.
constexpr std::string_view kCompileCachePrefix = "compile_cache";

bool is_corruption(int primary_code) {
  return primary_code == SQLITE_CORRUPT || primary_code == SQLITE_NOTADB;
}

std::string utc_stamp() {
  std::time_t const now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  return buffer;
}

// What an open failure means to the user, without SQL.
std::string reason_for(int primary_code, std::string const& sqlite_message) {
  switch (primary_code) {
    case SQLITE_NOTADB:
      return "is not a SQLite database (overwritten by something else?)";
    case SQLITE_CANTOPEN:
      return "cannot be opened (missing folder or no permission)";
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return "is read-only";
    case SQLITE_FULL:
      return "cannot grow: the disk is full";
    case SQLITE_IOERR:
      return "cannot be read or written (I/O error)";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "is locked by another process";
    default:
      return "cannot be used: " + sqlite_message;
  }
}

// "ok", or quick_check's first complaint (a DatabaseError with SQLITE_CORRUPT counts as one).
std::string quick_check(Database& database) {
  auto statement = database.prepare("PRAGMA quick_check(1)");
  return statement.step() ? statement.column_text(0) : "no answer";
}

std::vector<std::string> column_names(sqlite3* connection, std::string const& table) {
  std::vector<std::string> names;
  sqlite3_stmt* statement = nullptr;
  std::string const sql = "PRAGMA table_info(\"" + table + "\")";
  if (sqlite3_prepare_v2(connection, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK)
    while (sqlite3_step(statement) == SQLITE_ROW)
      names.emplace_back(reinterpret_cast<char const*>(sqlite3_column_text(statement, 1)));
  sqlite3_finalize(statement);
  return names;
}

std::vector<std::string> table_names(sqlite3* connection) {
  std::vector<std::string> names;
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(connection,
                         "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
                         -1, &statement, nullptr) == SQLITE_OK)
    while (sqlite3_step(statement) == SQLITE_ROW)
      names.emplace_back(reinterpret_cast<char const*>(sqlite3_column_text(statement, 0)));
  sqlite3_finalize(statement);
  return names;
}

// The integer key a table's rows are read back in: its rowid, or for a WITHOUT ROWID table the first
// column of its primary key (run_id in mutation_results and remeasurements). Empty when there is none.
std::string scan_key(sqlite3* connection, std::string const& table) {
  sqlite3_stmt* statement = nullptr;
  std::string const rowid = "SELECT rowid FROM \"" + table + "\" LIMIT 0";
  bool const has_rowid = sqlite3_prepare_v2(connection, rowid.c_str(), -1, &statement, nullptr) == SQLITE_OK;
  sqlite3_finalize(statement);
  if (has_rowid) return "rowid";
  std::string key;
  std::string const info = "PRAGMA table_info(\"" + table + "\")";
  if (sqlite3_prepare_v2(connection, info.c_str(), -1, &statement, nullptr) == SQLITE_OK)
    while (sqlite3_step(statement) == SQLITE_ROW)
      if (sqlite3_column_int(statement, 5) == 1 &&
          std::string_view(reinterpret_cast<char const*>(sqlite3_column_text(statement, 2))) == "INTEGER")
        key = "\"" + std::string(reinterpret_cast<char const*>(sqlite3_column_text(statement, 1))) + "\"";
  sqlite3_finalize(statement);
  return key;
}

// Whether the first row with key > `after` can be reached: SQLite seeks through the B-tree, so a seek past a
// damaged leaf (or subtree) succeeds once `after` is beyond the keys the damaged page held.
bool seek_succeeds(sqlite3* from, std::string const& table, std::string const& key, std::int64_t after) {
  sqlite3_stmt* probe = nullptr;
  std::string const sql =
      "SELECT " + key + " FROM \"" + table + "\" WHERE " + key + " > ? ORDER BY " + key + " LIMIT 1";
  bool ok = false;
  if (sqlite3_prepare_v2(from, sql.c_str(), -1, &probe, nullptr) == SQLITE_OK) {
    sqlite3_bind_int64(probe, 1, after);
    int const rc = sqlite3_step(probe);
    ok = rc == SQLITE_ROW || rc == SQLITE_DONE;
  }
  sqlite3_finalize(probe);
  return ok;
}

// The smallest key k > `last` such that the rows after k can be read again (nullopt: none before the end
// of the key range): doubling steps past the damage, then bisection back to its edge, so that only the
// damaged page's own rows are lost (about 2 x 63 seeks at most).
std::optional<std::int64_t> key_past_damage(sqlite3* from, std::string const& table, std::string const& key,
                                            std::int64_t last) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::uint64_t step = 1;
  auto at = [&](std::uint64_t s) -> std::int64_t {  // last + s, capped at kMax (modular, so no overflow)
    std::uint64_t const room = std::uint64_t(kMax) - std::uint64_t(last);
    return s >= room ? kMax : std::int64_t(std::uint64_t(last) + s);
  };
  while (!seek_succeeds(from, table, key, at(step))) {
    if (at(step) == kMax) return std::nullopt;
    step *= 2;
  }
  std::uint64_t bad = step / 2, good = step;  // at(bad) fails (or is `last` itself), at(good) succeeds
  while (good - bad > 1) {
    std::uint64_t const middle = bad + (good - bad) / 2;
    (seek_succeeds(from, table, key, at(middle)) ? good : bad) = middle;
  }
  return at(good);
}

struct CopyOutcome {
  std::size_t copied = 0;
  std::size_t damaged_regions = 0;  // runs of rows skipped at a damaged page (their rows are lost)
};

// Copies the rows of `table` readable in `from` into `to` (columns both have), in key order. At a damaged
// page the scan resumes past it (key_past_damage), so every row the B-tree still reaches is kept, not only
// those before the first damage (rows below a damaged interior page are out of reach: that would take
// reading the file page by page, as SQLite's recover extension does). A table without an integer key (none
// outside the compile cache) stops at its first damage.
CopyOutcome copy_table(sqlite3* from, sqlite3* to, std::string const& table) {
  std::vector<std::string> const wanted = column_names(to, table);
  std::set<std::string> const present = [&] {
    auto names = column_names(from, table);
    return std::set<std::string>(names.begin(), names.end());
  }();
  std::string columns, marks;
  for (auto const& c : wanted)
    if (present.contains(c)) {
      columns += (columns.empty() ? "\"" : ", \"") + c + "\"";
      marks += marks.empty() ? "?" : ", ?";
    }
  CopyOutcome outcome;
  if (columns.empty()) return outcome;
  std::string const key = scan_key(from, table);
  std::string const insert =
      "INSERT OR IGNORE INTO \"" + table + "\" (" + columns + ") VALUES (" + marks + ")";
  sqlite3_stmt* write = nullptr;
  if (sqlite3_prepare_v2(to, insert.c_str(), -1, &write, nullptr) != SQLITE_OK) {
    sqlite3_finalize(write);
    return outcome;
  }
  // The key comes first in each row read (when there is one), then the columns copied.
  int const first_column = key.empty() ? 0 : 1;
  std::string const from_table = " FROM \"" + table + "\"";
  std::string const select_all = key.empty()
                                     ? "SELECT " + columns + from_table
                                     : "SELECT " + key + ", " + columns + from_table + " ORDER BY " + key;
  std::string const select_after =
      "SELECT " + key + ", " + columns + from_table + " WHERE " + key + " > ? ORDER BY " + key;
  std::optional<std::int64_t> after;  // resume after this key; none: from the start
  std::optional<std::int64_t> last;   // the key of the last row read
  for (;;) {
    sqlite3_stmt* read = nullptr;
    if (sqlite3_prepare_v2(from, (after ? select_after : select_all).c_str(), -1, &read, nullptr) !=
        SQLITE_OK) {
      sqlite3_finalize(read);
      ++outcome.damaged_regions;
      break;
    }
    if (after) sqlite3_bind_int64(read, 1, *after);
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(read)) == SQLITE_ROW) {
      if (!key.empty()) last = sqlite3_column_int64(read, 0);
      for (int i = first_column; i < sqlite3_column_count(read); ++i)
        sqlite3_bind_value(write, i - first_column + 1, sqlite3_column_value(read, i));
      if (sqlite3_step(write) == SQLITE_DONE) ++outcome.copied;
      sqlite3_reset(write);
    }
    sqlite3_finalize(read);
    if (rc == SQLITE_DONE) break;
    ++outcome.damaged_regions;
    if (key.empty()) break;
    // Past the last row read (or the point this pass resumed from, which `last` holds then).
    after = key_past_damage(from, table, key, last.value_or(std::numeric_limits<std::int64_t>::min()));
    if (!after) break;
    last = after;
  }
  sqlite3_finalize(write);
  return outcome;
}

// Rows whose parent did not survive (a measurement of a GPU row on a damaged page) are dropped, so that
// the fresh file satisfies its foreign keys.
void drop_orphans(Database& database) {
  for (int pass = 0; pass < 4; ++pass) {  // a dropped parent can orphan a grandchild
    std::vector<std::pair<std::string, std::int64_t>> orphans;
    auto check = database.prepare("PRAGMA foreign_key_check");
    while (check.step()) orphans.emplace_back(check.column_text(0), check.column_int64(1));
    if (orphans.empty()) return;
    for (auto const& [table, rowid] : orphans)
      database.prepare("DELETE FROM \"" + table + "\" WHERE rowid = ?").bind_int64(1, rowid).run();
  }
}

std::mutex checked_mutex;
std::set<std::string> checked_paths;  // checked (or salvaged) by this process already

void move_aside(fs::path const& path, fs::path const& kept_as) {
  std::error_code error;
  fs::rename(path, kept_as, error);
  if (error)
    throw UnusableDatabaseError(path, "is damaged and cannot be moved aside (" + error.message() + ")");
  // The write-ahead log belongs to the damaged file: it goes with it. The shared-memory index is rebuilt.
  fs::rename(path.string() + "-wal", kept_as.string() + "-wal", error);
  fs::remove(path.string() + "-shm", error);
}

}  // namespace

UnusableDatabaseError::UnusableDatabaseError(fs::path const& path, std::string const& reason)
    : std::runtime_error("database " + path.string() + " " + reason) {}

UnusableDatabaseError unusable_database(fs::path const& path, DatabaseError const& error) {
  return UnusableDatabaseError(path, reason_for(error.primary_code(), error.sqlite_message()));
}

SalvageReport salvage_database(fs::path const& path) {
  SalvageReport report;
  report.kept_as = path.string() + ".corrupt-" + utc_stamp();
  move_aside(path, report.kept_as);
  {
    std::lock_guard lock(checked_mutex);
    checked_paths.insert(fs::absolute(path).lexically_normal().string());
  }
  Database fresh = open_database(path);
  sqlite3* damaged = nullptr;
  if (sqlite3_open_v2(report.kept_as.c_str(), &damaged, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    fresh.execute("PRAGMA foreign_keys = OFF");
    Transaction transaction(fresh);
    for (auto const& table : table_names(damaged)) {
      if (std::string_view(table).starts_with(kCompileCachePrefix)) continue;
      CopyOutcome const copy = copy_table(damaged, fresh.handle(), table);
      report.rows_salvaged += copy.copied;
      report.damaged_regions_skipped += copy.damaged_regions;
    }
    transaction.commit();
    fresh.execute("PRAGMA foreign_keys = ON");
    drop_orphans(fresh);
  }
  sqlite3_close_v2(damaged);
  // Reading a WAL database leaves its shared-memory index (and an empty log) beside it: not evidence.
  std::error_code ignored;
  fs::remove(report.kept_as.string() + "-shm", ignored);
  if (fs::exists(report.kept_as.string() + "-wal") &&
      fs::file_size(report.kept_as.string() + "-wal", ignored) == 0)
    fs::remove(report.kept_as.string() + "-wal", ignored);
  std::fprintf(
      stderr,
      "database %s was damaged: moved to %s; %zu rows of measurements and runs salvaged into a fresh "
      "file%s (the compile cache is rebuilt as configs are compiled)\n",
      path.c_str(), report.kept_as.c_str(), report.rows_salvaged,
      report.damaged_regions_skipped
          ? (", the rows of " + std::to_string(report.damaged_regions_skipped) + " damaged page(s) lost")
                .c_str()
          : "");
  return report;
}

void ensure_intact(fs::path const& path) {
  std::error_code error;
  auto const status = fs::status(path, error);
  if (status.type() == fs::file_type::not_found) return;  // created fresh
  if (status.type() == fs::file_type::directory)
    throw UnusableDatabaseError(path, "is a folder, not a database file");
  std::string const key = fs::absolute(path).lexically_normal().string();
  {
    std::lock_guard lock(checked_mutex);
    if (!checked_paths.insert(key).second) return;
  }
  std::string verdict;
  try {
    Database database(path);
    verdict = quick_check(database);
  } catch (DatabaseError const& e) {
    if (!is_corruption(e.primary_code()) || e.primary_code() == SQLITE_NOTADB)
      throw unusable_database(path, e);
    verdict = e.sqlite_message();
  }
  if (verdict != "ok") salvage_database(path);
}

}  // namespace fl::db
