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
#include "db/salvage_copy.hpp"
#include "db/schema.hpp"

namespace fl::db {

namespace {

namespace fs = std::filesystem;
using salvage::copy_table;
using salvage::CopyOutcome;
using salvage::drop_orphans;
using salvage::table_names;

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
