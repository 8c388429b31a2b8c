#pragma once
// fa-tune's run: for each selected problem and every family that can run it (--family narrows), measure the
// family's default config first (every problem's default before any problem searches), then search each
// problem under its share of --budget and --time-limit (split evenly over the problems that are left, so
// what one problem leaves unspent passes to the next), and report the best config per problem and family
// with its TFLOP/s, its speed-up over the default, where the time went (compile vs verification vs timing),
// the best family per problem with its margin over the runner-up family, and, with --noise-runs, the noise
// report. The evaluators come from a TuningBackend: the GPU, or a recorded run (--replay).
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/tuning_store.hpp"
#include "device/problem.hpp"
#include "runtime/device.hpp"
#include "runtime/target_arch.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/tune/noise_report.hpp"
#include "tuner/tune/tune_loop.hpp"
#include "tuner/tune/tuning_backend.hpp"

namespace fl::tuner {

struct TuneRow {
  std::string family;
  std::string problem;
  device::Problem problem_spec;  // the problem itself (describe(problem_spec) == problem)
  std::string best_config;
  double best_ms = 0.0;
  double best_tflops = 0.0;
  std::string default_config;
  double default_tflops = 0.0;  // 0 when the default was not ok
  std::string default_verdict;  // ok, wrong, pruned, failed, or "not measured" (time limit, lost context)
  std::string default_diagnosis;
  int evaluated = 0, resumed = 0, rejected = 0;
  std::size_t space_size = 0;  // valid configs of the family's space for this problem
  SearchEnd end = SearchEnd::not_reached;
  std::vector<std::string> faults;  // candidates that broke the GPU context, which was restored after each
  // Run 1's wall time (s) and where it went on the GPU thread, plus NVRTC time on the compile workers.
  double wall_s = 0.0, compile_wait_s = 0.0, verify_s = 0.0, timing_s = 0.0, compile_cpu_s = 0.0;
  double verify_sets_s = 0.0, verify_small_s = 0.0,
         verify_timed_run_s = 0.0;     // verify_s's parts (Evaluation)
  int timing_cut = 0;                  // measured candidates timed by the probe runs only
  RunRows candidates;                  // run 1's candidates in evaluation order (--export-measurements)
  std::vector<CandidateCost> costs;    // parallel to candidates
  std::vector<NoiseComparison> noise;  // runs 2..N against run 1
};

// One problem across families: the fastest family's best config, and how far behind the runner-up family's
// best was (none when only one family ran it).
struct ProblemWinner {
  std::string problem;
  std::string family, config;
  double tflops = 0.0, median_ms = 0.0;
  std::string runner_up_family;
  double runner_up_tflops = 0.0;
  int families_tried = 0;  // families that measured at least one config of this problem
  bool reached = false;    // some family evaluated something
};

struct TuningReport {
  std::vector<TuneRow> rows;
  std::vector<ProblemWinner> winners;  // one per problem, in problem order
  db::GpuKey gpu;
  std::string nvrtc_version;
  std::vector<std::int64_t> run_ids;  // one per noise run
  double reference_s = 0.0;           // verification inputs and their float64 references, once per run
  ForwardSources forwards;            // the backward forwards not computed when needed
  int compile_workers = 0;
  std::optional<std::string> context_lost;  // the config after which the GPU context was unusable, and why
  int stop_signal = 0;                      // SIGINT/SIGTERM that stopped the run (0: none)
  std::string split_note;                   // how --budget and --time-limit were split, in words
  bool from_store = false;  // read back from the database after --gpus workers: no times of this process
  std::string cross_check;  // --gpus: whether the workers' GPUs measure alike (tune/cross_check.hpp)
  std::string strategy;
};

// The problems to time: each selected class at each --seqlen, b and h from --batch/--heads or --tokens
// (default: the headline b = 16384 / n, h = 2048 / d).
std::vector<device::Problem> selected_problems(TuneOptions const& options);

// Families tuned: --family, else every family of the registry; each problem then takes those whose
// unsupported() says nothing against it (a new family joins without edits here).
std::vector<std::string> default_tuning_families(TuneOptions const& options);

// The run's (problem, family) pairs in table order (problem-major): every selected problem with every family
// of default_tuning_families that can run it and that `can_measure` (the backend) allows.
struct RunPair {
  device::Problem problem;
  std::size_t problem_index = 0;  // in selected_problems
  std::unique_ptr<device::Family> family;
};
std::vector<RunPair> run_pairs(
    TuneOptions const& options,
    std::function<bool(device::Family const&, device::Problem const&)> const& can_measure);

// Fails with a one-line reason when --arch does not match the device.
std::optional<std::string> arch_mismatch(runtime::TargetArch arch, runtime::DeviceInfo const& device);

// stop: asked before each candidate (Ctrl-C); returns the signal number or 0.
TuningReport run_tuning(TuneOptions const& options, TuningBackend& backend,
                        std::filesystem::path const& kernels_dir, std::filesystem::path const& db_path,
                        std::function<int()> const& stop = {});

// Run 1's row of one (family, problem) from its outcome: counts, the best and the default's verdict.
TuneRow tune_row(std::string family, device::Problem const& problem, std::size_t space_size,
                 device::Config const& default_config, TuneOutcome&& outcome);

// The best family per problem from the rows (exposed for tests).
std::vector<ProblemWinner> winners_of(std::vector<TuneRow> const& rows);

std::string render_tuning(TuningReport const& report);
// gpu_identity: the device line (DeviceInfo::identity()), or the recording's for a replay.
std::string tuning_json(TuningReport const& report, std::string const& gpu_identity);
// Run 1's candidates of every problem, one TSV row each (the recorded fixture of tests/tuner/data).
std::string measurements_tsv(TuningReport const& report, std::string const& command);

}  // namespace fl::tuner
