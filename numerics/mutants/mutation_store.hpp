#pragma once
// fa-mutate runs in SQLite (db/ schema version 3: mutation_runs, mutation_results): one mutation_runs row
// per (family, dtype) with its Stryker score and pass flag, one mutation_results row per mutant, all in one
// transaction so a database never holds half a run.
//
// Needs fl_numerics linked with fl_db and FL_NUMERICS_WITH_DB defined (numerics/CMakeLists.txt belongs to
// the numerics helper; the lead adds the two lines). Without them store_mutation_runs throws
// std::runtime_error saying so, and fa-mutate --db exits 2 with that line.
#include <filesystem>
#include <string>
#include <vector>

#include "numerics/mutants/mutation_campaign.hpp"

namespace fl::numerics::mutants {

bool mutation_store_available();

// Returns the run ids written. Mutants that are not applicable have no row: the schema's outcome column
// allows killed, survived and equivalent only (they are in the JSON report and the table).
std::vector<long long> store_mutation_runs(std::filesystem::path const& database, std::string const& command,
                                           std::vector<CampaignResult> const& results);

}  // namespace fl::numerics::mutants
