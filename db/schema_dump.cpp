// schema_dump() from db/schema.hpp: the canonical text the golden schema test compares.
#include <cctype>
#include <string>

#include "db/schema.hpp"

namespace fl::db {
namespace {

// Drops `-- comments` (outside quotes), collapses every run of whitespace into one space and spaces
// parentheses and commas one way, so the dump changes when the schema does and not when a migration's
// layout or comments do. Quoted text is kept byte for byte.
std::string normalise_sql(std::string_view sql) {
  std::string out;
  char quote = '\0';
  bool pending_space = false;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    char const c = sql[i];
    if (quote == '\0' && c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
      pending_space = true;
      continue;
    }
    if (quote == '\0' && std::isspace(static_cast<unsigned char>(c))) {
      pending_space = true;
      continue;
    }
    // Outside quotes, "( a , b )" and "(a,b)" both become "(a, b)".
    bool const tight = quote == '\0' && (c == ')' || c == ',' || (!out.empty() && out.back() == '('));
    if (pending_space && !out.empty() && !tight) out += ' ';
    pending_space = quote == '\0' && c == ',';
    out += c;
    if (quote == '\0' && (c == '\'' || c == '"')) {
      quote = c;
    } else if (c == quote) {
      quote = '\0';
    }
  }
  return out;
}

}  // namespace

std::string schema_dump(Database& database) {
  auto statement = database.prepare(
      "SELECT type, name, tbl_name, sql FROM sqlite_master "
      "WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND sql IS NOT NULL ORDER BY type, name");
  std::string dump;
  while (statement.step()) {
    dump += "-- " + statement.column_text(0) + " " + statement.column_text(1) + " on " +
            statement.column_text(2) + "\n";
    dump += normalise_sql(statement.column_text(3)) + ";\n";
  }
  dump += "PRAGMA user_version = " + std::to_string(schema_version(database)) + ";\n";
  return dump;
}

}  // namespace fl::db
