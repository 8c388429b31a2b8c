#pragma once
// fa-tune's command line: parsed and validated in one place, so that every bad value is one clear line
// (UsageError) and exit code 2, and the rest of the tuner only ever sees a valid TuneOptions.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "device/problem.hpp"

namespace fl::tuner {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class CausalChoice { both, yes, no };
enum class DirectionChoice { fwd, bwd, both };

struct TuneOptions {
  std::string arch;  // "sm80", "sm89", "sm90" (sm90 compiles sm_90a code)
  bool compile_only = false;
  std::vector<std::string> families;  // empty: every family that exists for the arch
  std::vector<std::string> dtypes;    // fp16, bf16, fp8_e4m3, fp8_e5m2
  std::vector<int> head_dims;         // 64, 128, 256
  std::vector<int> seqlens;           // n (n_q = n_k)
  std::optional<int> batch;           // with heads: a fixed shape
  std::optional<int> heads;
  std::optional<std::int64_t> tokens;  // b = tokens / n (the headline convention: 16384)
  CausalChoice causal = CausalChoice::both;
  DirectionChoice direction = DirectionChoice::fwd;
  std::string strategy = "exhaustive";
  std::optional<int> budget;             // evaluations in all, split over the problems (tune_command.hpp)
  std::optional<double> time_limit_s;    // wall-clock limit for the whole run, split the same way
  std::string replay_path;               // empty: the GPU; else a recorded measurement TSV answers
  std::string pace = "fast";             // fast or baseline (the 2026-11-29 protocol): tune/gpu_evaluator.hpp
  std::string db_path;                   // empty: the default database location
  std::string forward_store;             // empty: none; else backward forwards kept here (tune/forward_store)
  std::string merge_path;                // --merge: import this database's measurements into --db, then exit
  std::string json_path;                 // empty: no JSON
  std::string report_dir;                // empty: none; else Markdown + SVG plots + CSV (tune/tune_plots)
  std::string export_best_path;          // empty: none; else the best configs measured here, as seed TSV
  std::string export_measurements_path;  // empty: none; else every candidate of run 1, TSV (test fixtures)
  int noise_runs = 1;                    // >= 2: repeat the run, re-measuring everything, and report noise
  std::string measured_on;   // without a GPU: answer from rows of GPUs whose name contains this (empty: all)
  bool warm_start = false;   // evaluate the best configs stored or shipped at the nearest shapes first
  std::string command_line;  // as typed, stored with each tuning run (filled by the command's main)
  std::string kernels_dir;   // empty: found by runtime/
  int jobs = 0;              // compile workers; 0: one per core
  // --gpus: one worker process per GPU (tune/gpu_workers.hpp), by CUDA ordinal (PCI bus order); empty and
  // not all_gpus: this process measures on GPU 0 itself.
  std::vector<int> gpus;
  bool all_gpus = false;  // --gpus all: every GPU the driver lists, resolved when the run starts
  // Set by the coordinator on its workers' command lines (not in --help): measure on this ordinal, and
  // only shard K of N (1-based) of the run's work (tune_command.hpp says how work is split).
  std::optional<int> worker_gpu;
  std::optional<std::pair<int, int>> shard;
  std::uint64_t seed = 1;
  device::Fp8Options fp8;  // how the FP8 dtypes' operands are made (tuner/cli/fp8_options.hpp)
  bool help = false;
  std::string help_text;
};

// Throws UsageError for any bad value; returns help=true with help_text filled for --help.
TuneOptions parse_tune_options(int argc, char const* const argv[]);

// The most GPUs one host has that --gpus accepts (ordinals 0..kMaxGpus-1).
inline constexpr int kMaxGpus = 64;

}  // namespace fl::tuner
