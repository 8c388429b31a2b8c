#include "db/tuning_runs.hpp"

#include "db/transaction.hpp"
#include "db/tuning_store.hpp"

namespace fl::db {

std::int64_t begin_tuning_run(Database& database, std::string const& command,
                              std::optional<std::int64_t> repeat_of, int repeat_index) {
  Transaction transaction(database);
  auto s = database.prepare(
      "INSERT INTO tuning_runs (started_at, command, repeat_of, repeat_index) VALUES (?, ?, ?, ?)");
  s.bind_text(1, utc_timestamp()).bind_text(2, command);
  if (repeat_of)
    s.bind_int64(3, *repeat_of);
  else
    s.bind_null(3);
  s.bind_int64(4, repeat_index).run();
  auto const id = database.last_insert_rowid();
  transaction.commit();
  return id;
}

std::optional<std::string> tuning_run_command(Database& database, std::int64_t run_id) {
  auto s = database.prepare("SELECT command FROM tuning_runs WHERE run_id = ?");
  s.bind_int64(1, run_id);
  if (!s.step()) return std::nullopt;
  return s.column_text(0);
}

}  // namespace fl::db
