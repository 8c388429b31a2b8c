#pragma once
// A database that cannot be trusted is never used as if it could:
//  - a path that cannot hold a database (a folder, a file that is not SQLite, no permission, read-only)
//    is an UnusableDatabaseError: one line naming the file, exit code 2 in every command;
//  - a database damaged inside (PRAGMA quick_check fails, or SQLite reports SQLITE_CORRUPT) is moved
//    aside as "<name>.corrupt-<UTC time>" and its rows are salvaged, table by table, into a fresh file at
//    the same path. The compile cache is not copied: it is derivable, and a damaged CUBIN would cost more
//    than a recompile. The user is told in one line (stderr) what was kept and where the bad file is.
// open_database() (db/schema.hpp) runs this once per process and path before opening for writing.
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace fl::db {

class UnusableDatabaseError : public std::runtime_error {
 public:
  UnusableDatabaseError(std::filesystem::path const& path, std::string const& reason);
  explicit UnusableDatabaseError(std::string const& line) : std::runtime_error(line) {}
};

class DatabaseError;
// The one line for a file SQLite refused to open or use: "database PATH is read-only", etc.
UnusableDatabaseError unusable_database(std::filesystem::path const& path, DatabaseError const& error);

struct SalvageReport {
  std::filesystem::path kept_as;  // where the damaged file now is
  std::size_t rows_salvaged = 0;  // rows copied into the fresh file (compile cache not counted)
  // Runs of rows the copy skipped at a damaged page (it resumes past each one: a damaged leaf loses its own
  // rows, a damaged interior page the rows below it).
  std::size_t damaged_regions_skipped = 0;
};

// Checks `path` (nothing happens when it does not exist yet); salvages it when damaged. Throws
// UnusableDatabaseError when it cannot be used at all.
void ensure_intact(std::filesystem::path const& path);

// The salvage itself, for tests and for callers that met SQLITE_CORRUPT after the check: moves `path`
// aside, creates a fresh migrated database there and copies every readable row. Prints the one line.
SalvageReport salvage_database(std::filesystem::path const& path);

}  // namespace fl::db
