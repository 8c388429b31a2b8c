#include "tuner/tune/stored_rows.hpp"

#include "tuner/tune/tuning_protocol.hpp"

namespace fl::tuner {

bool timed_otherwise(db::Measurement const& stored) {
  return stored.protocol && *stored.protocol != kTuningProtocol;
}

bool measure_again(device::Config const& config, db::Measurement const& stored,
                   device::Config const& default_config) {
  return timed_otherwise(stored) || (stored.verdict == "pruned" && config == default_config);
}

std::vector<StoredRow> stored_rows(db::Database& database, db::MeasurementKey const& prefix,
                                   ParameterSpace const& space, device::Config const& default_config) {
  std::vector<StoredRow> rows;
  for (auto& [text, measurement] : db::measurements_for(database, prefix)) {
    auto config = device::parse_config(text);
    if (!config) continue;  // not a config this build can name: never proposed either
    auto point = space.point_of(*config);
    if (!point || measure_again(*config, measurement, default_config)) continue;
    rows.push_back({std::move(*point), std::move(*config), text, std::move(measurement)});
  }
  return rows;
}

}  // namespace fl::tuner
