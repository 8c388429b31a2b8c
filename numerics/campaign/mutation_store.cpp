#include "numerics/campaign/mutation_store.hpp"

#include <stdexcept>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "db/schema.hpp"
#include "db/transaction.hpp"

namespace fl::numerics::mutants {

namespace {

std::string utc_now() {
  auto const now = std::chrono::system_clock::now();
  std::time_t const t = std::chrono::system_clock::to_time_t(now);
  auto const ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::gmtime(&t));
  char out[40];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

std::string join(std::vector<std::string> const& ids) {
  std::string out;
  for (auto const& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

// One (family, dtype) slice of a campaign, scored on its own.
CampaignResult slice(CampaignResult const& all, Precision precision) {
  CampaignResult out;
  out.target = all.target;
  out.family = all.family;
  for (auto const& b : all.baseline)
    if (b.precision == precision) out.baseline.push_back(b);
  for (auto const& o : all.outcomes)
    if (o.precision == precision) out.outcomes.push_back(o);
  return out;
}

}  // namespace

std::vector<long long> store_mutation_runs(std::filesystem::path const& database, std::string const& command,
                                           std::vector<CampaignResult> const& results) {
  db::Database db = db::open_database(database);
  db::Transaction transaction(db);
  std::string const started = utc_now();
  auto run = db.prepare(
      "INSERT INTO mutation_runs (started_at, command, target, family, dtype, gpu_id, mutation_score, "
      "passed) "
      "VALUES (?, ?, ?, ?, ?, NULL, ?, ?)");
  auto result_row = db.prepare(
      "INSERT INTO mutation_results (run_id, mutant_id, outcome, killing_input_family, diagnosis, "
      "named_correctly, match_error, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  std::vector<long long> ids;
  for (CampaignResult const& campaign : results) {
    std::vector<Precision> precisions;
    for (auto const& b : campaign.baseline) precisions.push_back(b.precision);
    for (Precision precision : precisions) {
      CampaignResult const part = slice(campaign, precision);
      run.reset();
      run.bind_text(1, started).bind_text(2, command).bind_text(3, part.target).bind_text(4, part.family);
      run.bind_text(5, name(precision)).bind_double(6, part.score()).bind_int64(7, part.ok() ? 1 : 0);
      run.run();
      long long const run_id = db.last_insert_rowid();
      ids.push_back(run_id);
      for (MutantOutcome const& o : part.outcomes) {
        bool const killed = o.status == MutantStatus::killed;
        result_row.reset();
        result_row.bind_int64(1, run_id).bind_text(2, info(o.id).name);
        // The schema spells it not_applicable; the table printout says "not applicable".
        result_row.bind_text(
            3, o.status == MutantStatus::not_applicable ? "not_applicable" : status_name(o.status));
        if (killed)
          result_row.bind_text(4, o.killed_by->describe());
        else
          result_row.bind_null(4);
        result_row.bind_text(5, join(o.diagnosis));
        if (killed)
          result_row.bind_int64(6, o.named_correctly ? 1 : 0);
        else
          result_row.bind_null(6);
        if (killed && !o.diagnosis.empty())
          result_row.bind_double(7, o.match_error);
        else
          result_row.bind_null(7);
        result_row.bind_text(8, killed ? o.evidence : o.reason);
        result_row.run();
      }
    }
  }
  transaction.commit();
  return ids;
}

}  // namespace fl::numerics::mutants
