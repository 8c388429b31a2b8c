#pragma once
// What a resumed tuning run starts from: every measurement the database holds for its family and problem
// that is a point of its space. tune_loop.cpp answers each as if the strategy had proposed it, so nothing
// stored is measured again and --budget counts them, whatever the strategy proposes this time (--warm-start's
// first configs follow the database's current best configs, which move as a grid line progresses: on
// 2026-12-04 a grid line whose budget was spent, rerun by replaying its strategy, measured 180 configs more
// in 248 s of the H200, experiments/tuner/raw/2026-12-04-grid-180252Z).
#include <string>
#include <vector>

#include "db/tuning_store.hpp"
#include "device/config.hpp"
#include "tuner/strategy/parameter_space.hpp"

namespace fl::tuner {

struct StoredRow {
  PointIndex point;
  device::Config config;
  std::string text;  // the config as stored
  db::Measurement measurement;
};

// Timed with another protocol than fa-tune's (tuning_protocol.hpp). A row without one was not timed: schema
// v9 gave every timed row before it fa-tune's.
bool timed_otherwise(db::Measurement const& stored);

// A stored row that is measured again, never taken as answered: one timed otherwise, and a default stored as
// pruned, which was pruned by the rule before SpillRule (tuner/compile/prune.hpp: spills never prune the
// default), as every problem measures its default.
bool measure_again(device::Config const& config, db::Measurement const& stored,
                   device::Config const& default_config);

// The measurements of `prefix` (its config ignored) whose config is a point of `space` (under --gpus with
// the candidates split, a worker's part), in the order they were stored, less a default to measure again.
std::vector<StoredRow> stored_rows(db::Database& database, db::MeasurementKey const& prefix,
                                   ParameterSpace const& space, device::Config const& default_config);

}  // namespace fl::tuner
