#pragma once
// fa-tune --gpus: one worker process per GPU. The coordinator (this process) starts `fa-tune` once per GPU
// with the user's arguments plus --gpu-worker ORDINAL --shard K/N (tune/shard.hpp: which pairs or
// candidates each takes); each worker has its own CUDA context on its ordinal and its own compile pool, and
// commits every result to the one SQLite database the moment it exists (WAL, a busy timeout: one writer at a
// time, the others wait). A worker killed (kill -9, a driver crash) loses only its candidate in flight; the
// others go on, and a rerun resumes every shard from the database. When all have ended, the table is read
// back from the database, whichever worker measured each row. `--gpus 0` is the same path with one worker.
//
// Rows are keyed by the GPU model (name, compute capability, SMs, driver): workers on identical GPUs share
// one key, which is what lets the shards of one problem merge and a later run on any of those GPUs resume
// them. Which device measured a row is kept with the worker's tuning run (tuning_runs.command ends with
// "[GPU ordinal UUID]"). The coordinator refuses GPUs of different models in one run and cross-checks those
// of one model (tune/cross_check.hpp).
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "db/tuning_store.hpp"
#include "device/family.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/tune/tune_command.hpp"

namespace fl::tuner {

struct WorkerExit {
  int gpu = 0;
  int exit_code = 0;  // when it exited
  int signal = 0;     // when a signal ended it (then exit_code is 128 + signal)
};

// The worker's command line (without the program): the user's arguments without --gpus and without the
// outputs only the coordinator writes (--json, --report, --export-best, --export-measurements), then
// --gpu-worker GPU --shard K/N.
std::vector<std::string> worker_arguments(std::vector<std::string> const& user_args, int gpu, int k, int n);

// Starts the workers (`self` with worker_arguments; their stdout goes to stderr, so stdout keeps only the
// merged table; CUDA_DEVICE_ORDER=PCI_BUS_ID so that ordinals are nvidia-smi's), forwards a stop request as
// SIGTERM (each finishes its candidate in flight), and waits for all of them.
std::vector<WorkerExit> run_gpu_workers(std::filesystem::path const& self,
                                        std::vector<std::string> const& user_args,
                                        std::vector<int> const& gpus,
                                        std::function<bool()> const& stop_requested);

// The table of the run read back from the database: for every (problem, family) the options select and
// `can_measure`, every measurement stored under (gpu, nvrtc, the family's source hash), the best among them
// stored as the best config. Rows of runs after `before_run` count as measured by this run, older ones as
// resumed.
TuningReport report_from_store(
    TuneOptions const& options, db::GpuKey const& gpu, std::string const& nvrtc_version,
    std::filesystem::path const& kernels_dir, std::filesystem::path const& db_path,
    std::function<bool(device::Family const&, device::Problem const&)> const& can_measure,
    std::int64_t before_run);

}  // namespace fl::tuner
