#pragma once
// fa-mutate runs in SQLite (db/ schema version 4: mutation_runs, mutation_results): one mutation_runs row
// per (family, dtype) with its Stryker score and pass flag, one mutation_results row per catalogued mutant
// (not applicable ones with their reason), all in one transaction so a database never holds half a run.
#include <filesystem>
#include <string>
#include <vector>

#include "numerics/campaign/mutation_campaign.hpp"

namespace fl::numerics::mutants {

// Returns the run ids written.
std::vector<long long> store_mutation_runs(std::filesystem::path const& database, std::string const& command,
                                           std::vector<CampaignResult> const& results);

}  // namespace fl::numerics::mutants
