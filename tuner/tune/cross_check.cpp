#include "tuner/tune/cross_check.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "db/tuning_runs.hpp"
#include "device/families/registry.hpp"
#include "tuner/tune/db_rows.hpp"
#include "tuner/tune/source_hash.hpp"
#include "tuner/tune/tune_command.hpp"
#include "tuner/tune/tune_loop.hpp"

namespace fl::tuner {

namespace {
// "... [GPU 3 GPU-uuid]" or "... [GPU 3, replay]" -> 3; -1 when the run is not a worker's.
int worker_gpu_of_run(db::Database& database, std::int64_t run_id) {
  auto const stored = db::tuning_run_command(database, run_id);
  if (!stored) return -1;
  std::string const& command = *stored;
  auto const at = command.rfind("[GPU ");
  int gpu = -1;
  if (at == std::string::npos || std::sscanf(command.c_str() + at, "[GPU %d", &gpu) != 1) return -1;
  return gpu;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * fraction);
  return text;
}
}  // namespace

std::optional<db::MeasurementKey> reference_of_run(
    TuneOptions const& options, db::GpuKey const& gpu, std::string const& nvrtc_version,
    std::filesystem::path const& kernels_dir,
    std::function<bool(device::Family const&, device::Problem const&)> const& can_measure) {
  auto const pairs = run_pairs(options, can_measure);
  if (pairs.empty()) return std::nullopt;
  auto const& [problem, index, family] = pairs.front();
  auto hash = family_source_hash(*family, problem, kernels_dir);
  if (!hash) throw std::runtime_error(hash.error().one_line());
  return db::MeasurementKey{gpu,
                            nvrtc_version,
                            hash.value(),
                            std::string(family->name()),
                            device::to_string(family->default_config(problem)),
                            problem_key(problem)};
}

void time_reference(TuneOptions const& options, TuningBackend& backend, db::Database& database,
                    std::filesystem::path const& kernels_dir, std::int64_t run_id) {
  auto const reference = reference_of_run(
      options, backend.gpu(), backend.nvrtc_version(), kernels_dir,
      [&](device::Family const& f, device::Problem const& p) { return backend.can_measure(f, p); });
  if (!reference) return;
  auto const family = device::find_family(reference->family);
  auto& evaluator = backend.evaluator_for(*family);
  evaluator.hear_best(std::nullopt);  // timed in full: no early stop
  auto row = measurement_of(
      evaluator.evaluate(*device::parse_config(reference->config), problem_from_key(reference->problem)));
  row.run_id = run_id;
  db::store_remeasurement(database, *reference, run_id, row);
}

CrossCheck cross_check(db::Database& database, db::MeasurementKey const& reference, std::int64_t before_run) {
  std::map<int, ReferenceTiming> by_gpu;
  auto const take = [&](db::Measurement const& m) {
    if (!m.run_id || *m.run_id <= before_run || m.verdict != "ok" || !m.median_ms) return;
    int const gpu = worker_gpu_of_run(database, *m.run_id);
    if (gpu < 0) return;
    double const spread = m.p20_ms && m.p80_ms ? (*m.p80_ms - *m.p20_ms) / *m.median_ms : 0.0;
    by_gpu[gpu] = ReferenceTiming{gpu, *m.median_ms, spread};
  };
  if (auto const first = db::find_measurement(database, reference)) take(*first);
  for (auto const& again : db::remeasurements_of(database, reference))
    take(again);  // a worker's own last word

  CrossCheck check;
  for (auto const& [gpu, timing] : by_gpu) check.timings.push_back(timing);
  check.text = "cross-check of the GPUs on " + reference.config + " " + reference.family + ": ";
  if (check.timings.size() < 2) {
    check.text += "fewer than two workers timed it, nothing to compare";
    return check;
  }
  auto const [fastest, slowest] = std::minmax_element(
      check.timings.begin(), check.timings.end(),
      [](ReferenceTiming const& a, ReferenceTiming const& b) { return a.median_ms < b.median_ms; });
  check.spread = slowest->median_ms / fastest->median_ms - 1.0;
  check.noise = kCrossCheckFloor;
  for (auto const& t : check.timings) check.noise = std::max(check.noise, t.relative_spread);
  check.agree = check.spread <= check.noise;
  for (auto const& t : check.timings) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.3f", t.median_ms);
    check.text += "GPU " + std::to_string(t.gpu) + " " + ms + " ms, ";
  }
  check.text += check.agree
                    ? "within the noise (" + percent(check.spread) + " <= " + percent(check.noise) + ")"
                    : "GPU " + std::to_string(slowest->gpu) + " is " + percent(check.spread) +
                          " slower than GPU " + std::to_string(fastest->gpu) + ", more than the noise (" +
                          percent(check.noise) +
                          "): their rows share one key but do not measure alike; tune them apart";
  return check;
}

}  // namespace fl::tuner
