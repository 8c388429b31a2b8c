#pragma once
// Best configs measured on real GPUs, shipped in the repository (db/seed/best_configs.tsv, compiled into
// the binary) so that a machine without a GPU still answers "what is the best config". Loaded into the
// best_configs table as source 'seed' on first use; a config this machine measured itself ('measured')
// is never overwritten by a seed.
#include <string>
#include <string_view>
#include <vector>

#include "db/database.hpp"
#include "db/tuning_store.hpp"

namespace fl::db {

// The TSV text compiled into the binary (db/seed/best_configs.tsv at build time).
std::string_view shipped_seed_configs();

// One header line, then one row per best config; '#' lines are comments. Throws std::invalid_argument
// naming the line for a malformed row.
std::vector<BestConfig> parse_seed_configs(std::string_view tsv);
std::string format_seed_configs(std::vector<BestConfig> const& rows);

// Inserts the seeds that have no row yet (measured rows win). Returns how many were inserted.
int load_seed_configs(Database& database, std::vector<BestConfig> const& seeds);

}  // namespace fl::db
