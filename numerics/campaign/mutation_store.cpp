#include "numerics/campaign/mutation_store.hpp"

#include "db/mutation_store.hpp"
#include "db/schema.hpp"

namespace fl::numerics::mutants {

namespace {

std::string join(std::vector<std::string> const& ids) {
  std::string out;
  for (auto const& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

// One (family, dtype) slice of a campaign, scored on its own.
CampaignResult slice(CampaignResult const& all, common::Precision precision) {
  CampaignResult out;
  out.target = all.target;
  out.family = all.family;
  out.planned_mutants = out.planned_rows = all.planned_mutants;
  for (auto const& b : all.baseline)
    if (b.precision == precision) out.baseline.push_back(b);
  for (auto const& o : all.outcomes)
    if (o.precision == precision) out.outcomes.push_back(o);
  // The slice in flight when a signal stopped the campaign holds fewer rows than planned.
  if (out.outcomes.size() < out.planned_rows) out.stop_signal = all.stop_signal;
  return out;
}

}  // namespace

std::vector<long long> store_mutation_runs(std::filesystem::path const& database, std::string const& command,
                                           std::vector<CampaignResult> const& results,
                                           std::optional<db::GpuKey> const& gpu) {
  std::vector<db::MutationRunRow> runs;
  for (CampaignResult const& campaign : results) {
    for (auto const& b : campaign.baseline) {
      CampaignResult const part = slice(campaign, b.precision);
      db::MutationRunRow run;
      run.target = part.target;
      run.family = part.family;
      run.dtype = name(b.precision);
      if (part.target == "gpu") run.gpu = gpu;
      run.mutation_score = part.score();
      if (!part.interrupted()) run.passed = part.ok();  // NULL: partial
      for (MutantOutcome const& o : part.outcomes) {
        bool const killed = o.status == MutantStatus::killed;
        db::MutationResultRow row;
        row.mutant_id = info(o.id).name;
        // The schema spells it not_applicable; the table printout says "not applicable".
        row.outcome = o.status == MutantStatus::not_applicable ? "not_applicable" : status_name(o.status);
        if (killed) row.killing_input_family = o.killed_by->describe();
        row.diagnosis = join(o.diagnosis);
        if (killed) row.named_correctly = o.named_correctly;
        if (killed && !o.diagnosis.empty()) row.match_error = o.match_error;
        row.note = killed ? o.evidence : o.reason;
        run.results.push_back(std::move(row));
      }
      runs.push_back(std::move(run));
    }
  }
  db::Database db = db::open_database(database);
  auto const ids = db::store_mutation_runs(db, command, runs);
  return {ids.begin(), ids.end()};
}

}  // namespace fl::numerics::mutants
