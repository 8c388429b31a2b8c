#pragma once
// Copying what is still readable out of a damaged SQLite file (db/integrity.cpp's salvage): each table's rows
// in key order, resuming past damaged pages, then the rows whose parents were lost dropped. Internal to db/.
#include <sqlite3.h>

#include <cstddef>
#include <string>
#include <vector>

#include "db/database.hpp"

namespace fl::db::salvage {

// The tables of `connection` (SQLite's own excluded).
std::vector<std::string> table_names(sqlite3* connection);

struct CopyOutcome {
  std::size_t copied = 0;
  std::size_t damaged_regions = 0;  // runs of rows skipped at a damaged page (their rows are lost)
};

// Copies the rows of `table` readable in `from` into `to` (columns both have), in key order. At a damaged
// page the scan resumes past it, so every row the B-tree still reaches is kept, not only those before the
// first damage.
CopyOutcome copy_table(sqlite3* from, sqlite3* to, std::string const& table);

// Rows whose parent did not survive are dropped, so that the fresh file satisfies its foreign keys.
void drop_orphans(Database& database);

}  // namespace fl::db::salvage
