#pragma once
// fa-tune with a GPU: for each selected family and problem, run the tuning loop with the chosen strategy
// and the GPU evaluator, measure the family's default config too, and report the best config per
// problem with its TFLOP/s and its speed-up over the default.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device.hpp"
#include "runtime/target_arch.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/problem.hpp"

namespace fl::tuner {

struct TuneRow {
  std::string family;
  std::string problem;
  std::string best_config;
  double best_ms = 0.0;
  double best_tflops = 0.0;
  std::string default_config;
  double default_tflops = 0.0;  // 0 when the default failed
  int evaluated = 0, resumed = 0, rejected = 0;
};

// The problems to time: each selected class at each --seqlen, b and h from --batch/--heads or --tokens
// (default: the headline b = 16384 / n, h = 2048 / d).
std::vector<Problem> selected_problems(TuneOptions const& options);

// Families tuned when --family is not given: the FlashAttention-2 families (naive and fa1 are baselines
// with a handful of configs; name them to tune them).
std::vector<std::string> default_tuning_families(TuneOptions const& options);

// Fails with a one-line reason when --arch does not match the device.
std::optional<std::string> arch_mismatch(runtime::TargetArch arch, runtime::DeviceInfo const& device);

std::vector<TuneRow> run_tuning(TuneOptions const& options, runtime::TargetArch arch,
                                std::filesystem::path const& kernels_dir,
                                std::filesystem::path const& db_path, runtime::DeviceInfo const& device);

std::string render_tuning(std::vector<TuneRow> const& rows);
std::string tuning_json(std::vector<TuneRow> const& rows, runtime::DeviceInfo const& device);

}  // namespace fl::tuner
