#include "db/mutation_store.hpp"

#include "db/transaction.hpp"

namespace fl::db {

std::vector<std::int64_t> store_mutation_runs(Database& database, std::string const& command,
                                              std::vector<MutationRunRow> const& runs) {
  Transaction transaction(database);
  std::string const started = utc_timestamp();
  auto run = database.prepare(
      "INSERT INTO mutation_runs (started_at, command, target, family, dtype, gpu_id, mutation_score, "
      "passed) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  auto result = database.prepare(
      "INSERT INTO mutation_results (run_id, mutant_id, outcome, killing_input_family, diagnosis, "
      "named_correctly, match_error, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  std::vector<std::int64_t> ids;
  for (MutationRunRow const& r : runs) {
    run.reset();
    run.bind_text(1, started).bind_text(2, command).bind_text(3, r.target).bind_text(4, r.family);
    run.bind_text(5, r.dtype);
    if (r.gpu)
      run.bind_int64(6, gpu_id(database, *r.gpu));
    else
      run.bind_null(6);
    run.bind_double(7, r.mutation_score);
    if (r.passed)
      run.bind_int64(8, *r.passed ? 1 : 0);
    else
      run.bind_null(8);
    run.run();
    std::int64_t const run_id = database.last_insert_rowid();
    ids.push_back(run_id);
    for (MutationResultRow const& m : r.results) {
      result.reset();
      result.bind_int64(1, run_id).bind_text(2, m.mutant_id).bind_text(3, m.outcome);
      if (m.killing_input_family)
        result.bind_text(4, *m.killing_input_family);
      else
        result.bind_null(4);
      result.bind_text(5, m.diagnosis);
      if (m.named_correctly)
        result.bind_int64(6, *m.named_correctly ? 1 : 0);
      else
        result.bind_null(6);
      if (m.match_error)
        result.bind_double(7, *m.match_error);
      else
        result.bind_null(7);
      result.bind_text(8, m.note);
      result.run();
    }
  }
  transaction.commit();
  return ids;
}

}  // namespace fl::db
