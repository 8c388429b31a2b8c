#pragma once
// fa-mutate runs in SQLite through db/mutation_store (mutation_runs, mutation_results): one mutation_runs
// row per (family, dtype) with its Stryker score, pass flag and, for the GPU target, the GPU; one
// mutation_results row per catalogued mutant (not applicable ones with their reason), all in one
// transaction so a database never holds half a run.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "db/tuning_store.hpp"
#include "numerics/campaign/mutation_campaign.hpp"

namespace fl::numerics::mutants {

// Returns the run ids written. `gpu`: the GPU the gpu-target campaigns ran on (recorded on their rows).
std::vector<long long> store_mutation_runs(std::filesystem::path const& database, std::string const& command,
                                           std::vector<CampaignResult> const& results,
                                           std::optional<db::GpuKey> const& gpu = std::nullopt);

}  // namespace fl::numerics::mutants
