#pragma once
// The mutation table family (schema v3, not_applicable v4): one mutation_runs row per fa-mutate (target,
// family, dtype) with its Stryker score, pass flag and, for the GPU target, the GPU it ran on; one
// mutation_results row per catalogued mutant. A call is one transaction, so a database never holds half a
// run. The rows are plain data: numerics/campaign/ turns a campaign into them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/tuning_store.hpp"

namespace fl::db {

struct MutationResultRow {
  std::string mutant_id;                            // catalogue id, e.g. unrescaled-o
  std::string outcome;                              // killed, survived, equivalent, not_applicable
  std::optional<std::string> killing_input_family;  // killed only
  std::string diagnosis;                // the ids the diagnosis named, best first, comma-separated
  std::optional<bool> named_correctly;  // killed only
  std::optional<double> match_error;    // killed and named only
  std::string note;                     // the evidence, the equivalence argument or the reason
};

struct MutationRunRow {
  std::string target;  // cpu or gpu
  std::string family;
  std::string dtype;
  std::optional<GpuKey> gpu;   // the GPU of a gpu run; none for the CPU emulator
  double mutation_score = 0;   // detected / valid x 100
  std::optional<bool> passed;  // NULL: the run did not finish (stopped by a signal): its rows are partial
  std::vector<MutationResultRow> results;
};

// Returns the run ids written, in the order of `runs`; every run gets the same started_at (now).
std::vector<std::int64_t> store_mutation_runs(Database& database, std::string const& command,
                                              std::vector<MutationRunRow> const& runs);

}  // namespace fl::db
