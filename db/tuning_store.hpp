#pragma once
// The tuning table family (schema v2, runs and re-measurements v5): GPUs, problems, measurements, best
// configs, tuning runs. Every write is one
// transaction, so a tuning run killed at any moment keeps every measurement it finished and nothing
// half-written; a rerun starts from them (measurements_for) and measures only what is missing.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"

namespace fl::db {

struct GpuKey {
  std::string name;  // "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  // The driver release as nvidia-smi prints it ("580.159.04") where nvidia-smi answered; otherwise the CUDA
  // driver API version as text ("13000"). Part of the key: a new driver is a new GPU row.
  std::string driver_version;
  int cuda_driver_api = 0;  // cuDriverGetVersion (13000 = CUDA 13.0); 0: unknown. Stored, not part of the key
};

struct ProblemKey {
  int batch = 1, heads_q = 1, heads_kv = 1, seqlen_q = 1, seqlen_k = 1, head_dim = 1;
  std::string dtype;  // fp16, bf16, fp8_e4m3, ...
  bool causal = false;
  std::string direction;  // fwd or bwd
  friend bool operator==(ProblemKey const&, ProblemKey const&) = default;
};

// Everything that names one measurement (the table's unique key).
struct MeasurementKey {
  GpuKey gpu;
  std::string nvrtc_version;
  std::string source_hash;  // SHA-256 over the family's kernels_src files
  std::string family;
  std::string config;  // tuner::to_string(Config)
  ProblemKey problem;
};

// How a measurement was timed (schema v9): untimed launches before the first timed run, by count, then by
// wall time (tuner/run/timing.hpp's TimingOptions). Under sustained load a card's clock steps down (the
// power cap), so the same kernel times faster after a short warm-up than settled.
struct TimingProtocol {
  int warmup_runs = 0;
  int settle_ms = 0;
  friend bool operator==(TimingProtocol const&, TimingProtocol const&) = default;
};

struct Measurement {
  std::string verdict;  // ok, wrong, pruned, failed
  std::string diagnosis;
  std::optional<double> median_ms, p20_ms, p80_ms, min_ms, max_ms, tflops;
  std::optional<int> runs;
  std::optional<double> clock_mhz, temperature_c;
  std::string compile_cache_key;
  std::string measured_at;                 // filled by store_measurement when empty
  std::optional<std::int64_t> run_id;      // the tuning run that measured it (NULL before schema v5)
  std::optional<TimingProtocol> protocol;  // how it was timed; none when it was not timed
};

struct BestConfig {
  GpuKey gpu;
  ProblemKey problem;
  std::string family;
  std::string config;
  double median_ms = 0;
  double tflops = 0;
  std::string source;  // measured or seed
  std::string nvrtc_version;
  std::string source_hash;  // empty when unknown (seed rows)
  std::string recorded_at;  // when the best was measured (empty: now), never when a rerun chose it again
};

std::optional<Measurement> find_measurement(Database& database, MeasurementKey const& key);
// Insert or replace the measurement of `key`, in its own transaction. Returns its row id.
std::int64_t store_measurement(Database& database, MeasurementKey const& key, Measurement const& measurement);
// Every stored measurement of one family and problem on one GPU, NVRTC version and source hash (prefix's
// config is ignored), as (config, measurement), in the order they were first stored: a resumed tuning run
// (tuner/tune/stored_rows.hpp) hears them as they were measured, and the first of two equal times stays the
// best, as it was when measured.
std::vector<std::pair<std::string, Measurement>> measurements_for(Database& database,
                                                                  MeasurementKey const& prefix);

// A repeat's measurement of `key`, in its own transaction. Stored beside the measurement of `key` (which it
// never replaces: the first answer stays the one resume and the best config use); when `key` has no stored
// measurement yet, this one becomes it.
void store_remeasurement(Database& database, MeasurementKey const& key, std::int64_t run_id,
                         Measurement const& measurement);
// Every re-measurement of `key`, in run order.
std::vector<Measurement> remeasurements_of(Database& database, MeasurementKey const& key);

void store_best_config(Database& database, BestConfig const& best);
// Best configs, optionally only those of one GPU name; ordered by family, problem.
std::vector<BestConfig> best_configs(Database& database, std::optional<std::string> const& gpu_name = {});

std::string utc_timestamp();  // "2026-11-29T16:45:03.123Z"

// The gpus row of `gpu`, inserted the first time (every table that names a GPU refers to it).
std::int64_t gpu_id(Database& database, GpuKey const& gpu);

}  // namespace fl::db
