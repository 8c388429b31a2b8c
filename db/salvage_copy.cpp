#include "db/salvage_copy.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <set>

namespace fl::db::salvage {

namespace {

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

}  // namespace

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
}  // namespace fl::db::salvage
