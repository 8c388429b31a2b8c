#pragma once
// fa-tune --merge OTHER.sqlite: the measurements of another FlashLab database (another host's tuning, a
// multi-GPU run's copy) imported into this one, so hosts can tune separately and combine. A measurement this
// database already has for the same key (GPU, NVRTC, source hash, family, config, problem) is kept; the
// others come in under one tuning run "merged from OTHER"; the best config per (GPU, problem, family) is then
// the fastest of both. One transaction: a failure leaves this database as it was. OTHER is only read, and
// must have this build's schema version (open it once with this fa-tune to migrate it).
//
// For a fleet of hosts this is the array-job pattern of a batch scheduler (Slurm job arrays: one task per
// host or GPU shard, each writing its own database, merged afterwards); a shared PostgreSQL store is the
// other existing design, not built here: SQLite keeps a single file that travels with the GPU run.
#include <cstdint>
#include <filesystem>

#include "db/database.hpp"

namespace fl::db {

struct MergeCounts {
  std::int64_t imported = 0;      // measurements new here
  std::int64_t already_here = 0;  // measurements of OTHER whose key this database had (kept as they were)
  std::int64_t best_updated = 0;  // best configs added or replaced by a faster one of OTHER
};

// Throws UnusableDatabaseError for an OTHER that is not a FlashLab database of this schema version.
MergeCounts merge_measurements(Database& into, std::filesystem::path const& other);

}  // namespace fl::db
