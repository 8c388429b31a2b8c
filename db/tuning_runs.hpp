#pragma once
// The tuning_runs table (schema v5): one row per fa-tune invocation or --noise-runs repeat; measurements and
// remeasurements name the run that made them.
#include <cstdint>
#include <optional>
#include <string>

#include "db/database.hpp"

namespace fl::db {

// A tuning run: one fa-tune invocation, or one repeat of a --noise-runs series (repeat_of = the series' first
// run, repeat_index 2, 3, ...). Returns its run id.
std::int64_t begin_tuning_run(Database& database, std::string const& command,
                              std::optional<std::int64_t> repeat_of = {}, int repeat_index = 1);

// The command line stored for `run_id` (a GPU worker's ends in "[GPU <ordinal> ...]"), or nullopt.
std::optional<std::string> tuning_run_command(Database& database, std::int64_t run_id);

}  // namespace fl::db
