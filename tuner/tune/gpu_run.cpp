#include "tuner/tune/gpu_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "common/exit_codes.hpp"
#include "common/stop_signals.hpp"
#include "db/schema.hpp"
#include "db/tuning_runs.hpp"
#include "device/gpu_key.hpp"
#include "runtime/device.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tuner/tune/cross_check.hpp"
#include "tuner/tune/gpu_backend.hpp"
#include "tuner/tune/gpu_workers.hpp"
#include "tuner/tune/replay_backend.hpp"

namespace fl::tuner {

int tune_on_gpus(TuneOptions const& options, std::vector<std::string> user_args, runtime::TargetArch arch,
                 std::filesystem::path const& kernels_dir, std::filesystem::path const& db_path,
                 std::function<void(TuningReport const&, std::string const&)> const& write_outputs) {
  std::vector<int> gpus = options.gpus;
  db::GpuKey gpu;
  std::string nvrtc = "replay", identity;
  std::function<bool(device::Family const&, device::Problem const&)> can_measure =
      [](auto const&, auto const&) { return true; };
  std::unique_ptr<ReplayBackend> replay;
  if (!options.replay_path.empty()) {  // the workers replay; their ordinals are labels
    try {
      replay = std::make_unique<ReplayBackend>(options.replay_path);
    } catch (std::exception const& e) {
      std::fprintf(stderr, "fa-tune: --replay: %s\n", e.what());
      return common::kExitBadInput;
    }
    gpu = replay->gpu();
    identity = gpu.name;
    can_measure = [&](auto const& family, auto const& problem) {
      return replay->can_measure(family, problem);
    };
  } else {
    auto const api = runtime::driver_api();
    if (!api.ok()) runtime::exit_no_gpu(api.error());
    if (options.all_gpus)
      for (int g = 0; g < api.value()->device_count; ++g) gpus.push_back(g);
    std::optional<runtime::DeviceInfo> first;
    for (int g : gpus) {
      auto device = runtime::query_device(g);
      if (!device) {
        std::fprintf(stderr, "fa-tune: --gpus: %s\n", device.error().message.c_str());
        return gpus.empty() ? common::kExitNoGpu : common::kExitBadInput;
      }
      if (auto mismatch = arch_mismatch(arch, device.value())) {
        std::fprintf(stderr, "fa-tune: GPU %d: %s\n", g, mismatch->c_str());
        return common::kExitBadInput;
      }
      if (first && device->name != first->name) {
        std::fprintf(stderr, "fa-tune: --gpus: GPU %d is %s, GPU %d is %s: tune each model in its own run\n",
                     first->ordinal, first->name.c_str(), g, device->name.c_str());
        return common::kExitBadInput;
      }
      if (!first) first = device.value();
    }
    if (!first) runtime::exit_no_gpu(runtime::Error{"device", "no CUDA device for --gpus all", ""});
    gpu = device::gpu_key(*first);
    nvrtc = runtime::nvrtc_version();
    identity = first->identity() + " x " + std::to_string(gpus.size());
  }
  std::int64_t before_run = 0;
  {
    auto database = db::open_database(db_path);
    before_run = db::begin_tuning_run(database, options.command_line);
  }
  // The cores are shared by the workers' compile pools (one NVRTC process per core in all, not per worker);
  // what one worker compiles is in the database's compile cache for the others.
  if (options.jobs == 0)
    user_args.insert(user_args.end(), {"--jobs", std::to_string(std::max<std::size_t>(
                                                     1, std::thread::hardware_concurrency() / gpus.size()))});
  auto const started = std::chrono::steady_clock::now();
  common::StopOnSignals const stop_on_signals;
  auto const exits = run_gpu_workers(std::filesystem::read_symlink("/proc/self/exe"), user_args, gpus,
                                     [] { return common::StopOnSignals::received() != 0; });
  double const wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto report = report_from_store(options, gpu, nvrtc, kernels_dir, db_path, can_measure, before_run);
  if (gpus.size() > 1)
    if (auto const reference = reference_of_run(options, gpu, nvrtc, kernels_dir, can_measure)) {
      auto database = db::open_database(db_path);
      report.cross_check = cross_check(database, *reference, before_run).text;
    }
  report.split_note = "--gpus: " + std::to_string(gpus.size()) + " worker(s), " +
                      std::to_string(int(wall_s)) +
                      " s wall; each worker's own output (stderr) has its progress and where its time went";
  write_outputs(report, identity);
  int code = common::kExitOk;
  for (auto const& e : exits) {
    if (e.exit_code == 0) continue;
    std::printf(
        "fa-tune: the worker of GPU %d ended with %s %d; what it finished is in the database, a rerun "
        "resumes it\n",
        e.gpu, e.signal ? "signal" : "exit code", e.signal ? e.signal : e.exit_code);
    code = common::kExitCheckFailed;
  }
  std::printf("database: %s\n", db_path.string().c_str());
  if (auto const signal = common::StopOnSignals::received()) return common::exit_code_after_signal(signal);
  return code;
}

}  // namespace fl::tuner
