#pragma once
// --gpus: are the workers' GPUs comparable? Rows are keyed by the GPU model, so two H200s merge; that is
// right only if they measure alike (clocks, power limits and thermals differ between boards). After its
// share, every worker times one reference again (the family default of the run's first (problem, family)
// pair: every worker can run it), stored as a re-measurement under the worker's own run; the coordinator
// compares them: a GPU whose reference median differs from the fastest by more than the noise (the larger of
// the workers' p20-p80 spreads, at least kCrossCheckFloor) is named, with how much.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/tuning_store.hpp"
#include "device/family.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/tune/tuning_backend.hpp"

namespace fl::tuner {

inline constexpr double kCrossCheckFloor = 0.02;  // 2%: below this, medians of one config agree on the H200

struct ReferenceTiming {
  int gpu = 0;  // from the worker run's command ("[GPU n ...]")
  double median_ms = 0.0;
  double relative_spread = 0.0;  // (p80 - p20) / median
};

struct CrossCheck {
  std::vector<ReferenceTiming> timings;  // one per worker that timed the reference, by GPU
  double spread = 0.0;                   // (slowest - fastest) / fastest
  double noise = 0.0;                    // what counts as the same: max(floor, the largest relative spread)
  bool agree = true;
  std::string text;  // one line for the table's footer
};

// The reference of a run: the default config of its first (problem, family) pair, keyed as the workers store
// it; nullopt when the run has no pair.
std::optional<db::MeasurementKey> reference_of_run(
    TuneOptions const& options, db::GpuKey const& gpu, std::string const& nvrtc_version,
    std::filesystem::path const& kernels_dir,
    std::function<bool(device::Family const&, device::Problem const&)> const& can_measure);

// A worker's side: times the reference on this worker's GPU and stores it as a re-measurement under run_id.
void time_reference(TuneOptions const& options, TuningBackend& backend, db::Database& database,
                    std::filesystem::path const& kernels_dir, std::int64_t run_id);

// The reference timings stored under worker runs after `before_run` (re-measurements, or the measurement
// itself when a worker's re-measurement was the first row of the key).
CrossCheck cross_check(db::Database& database, db::MeasurementKey const& reference, std::int64_t before_run);

}  // namespace fl::tuner
