#pragma once
// fa-tune with a GPU: for each selected family and problem, measure the family's default config first, then
// run the tuning loop with the chosen strategy and the GPU evaluator (compiles on a pool of one worker per
// core, ahead of the GPU), and report the best config per problem with its TFLOP/s, its speed-up over the
// default, where the time went (compile vs verification vs timing) and, with --noise-runs, the noise report.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "db/tuning_store.hpp"
#include "runtime/device.hpp"
#include "runtime/target_arch.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/problem.hpp"
#include "tuner/tune/noise_report.hpp"

namespace fl::tuner {

struct TuneRow {
  std::string family;
  std::string problem;
  std::string best_config;
  double best_ms = 0.0;
  double best_tflops = 0.0;
  std::string default_config;
  double default_tflops = 0.0;  // 0 when the default was not ok
  std::string default_verdict;  // ok, wrong, pruned, failed, or "not measured" (time limit, lost context)
  std::string default_diagnosis;
  int evaluated = 0, resumed = 0, rejected = 0;
  // Run 1's wall time (s) and where it went on the GPU thread, plus NVRTC time on the compile workers.
  double wall_s = 0.0, compile_wait_s = 0.0, verify_s = 0.0, timing_s = 0.0, compile_cpu_s = 0.0;
  RunRows candidates;                  // run 1's candidates in evaluation order (--export-measurements)
  std::vector<NoiseComparison> noise;  // runs 2..N against run 1
};

struct TuningReport {
  std::vector<TuneRow> rows;
  db::GpuKey gpu;
  std::string nvrtc_version;
  std::vector<std::int64_t> run_ids;  // one per noise run
  double reference_s = 0.0;           // verification inputs and their float64 references, once per run
  int compile_workers = 0;
  std::optional<std::string> context_lost;  // the config after which the GPU context was unusable, and why
};

// The problems to time: each selected class at each --seqlen, b and h from --batch/--heads or --tokens
// (default: the headline b = 16384 / n, h = 2048 / d).
std::vector<Problem> selected_problems(TuneOptions const& options);

// Families tuned when --family is not given: the FlashAttention-2 families (naive and fa1 are baselines
// with a handful of configs; name them to tune them).
std::vector<std::string> default_tuning_families(TuneOptions const& options);

// Fails with a one-line reason when --arch does not match the device.
std::optional<std::string> arch_mismatch(runtime::TargetArch arch, runtime::DeviceInfo const& device);

// The GPU as measurements are keyed: name, compute capability, SMs, the driver release nvidia-smi prints
// (the API version when nvidia-smi does not answer) and the CUDA driver API version.
db::GpuKey gpu_key(runtime::DeviceInfo const& device);

TuningReport run_tuning(TuneOptions const& options, runtime::TargetArch arch,
                        std::filesystem::path const& kernels_dir, std::filesystem::path const& db_path,
                        runtime::DeviceInfo const& device);

std::string render_tuning(TuningReport const& report);
std::string tuning_json(TuningReport const& report, runtime::DeviceInfo const& device);
// Run 1's candidates of every problem, one TSV row each (the recorded fixture of tests/tuner/data).
std::string measurements_tsv(TuningReport const& report, std::string const& command);

}  // namespace fl::tuner
