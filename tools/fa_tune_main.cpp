// fa-tune: JIT-compile attention kernel configs, verify and time them, keep everything in SQLite, and
// print the best config per problem. --compile-only needs no GPU.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>

#include "common/atomic_file.hpp"
#include "common/exit_codes.hpp"
#include "common/stop_signals.hpp"
#include "common/temporary_files.hpp"
#include "db/database.hpp"
#include "db/merge.hpp"
#include "db/schema.hpp"
#include "db/seed_configs.hpp"
#include "device/families/registry.hpp"
#include "device/gpu_telemetry.hpp"
#include "runtime/device.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/kernel_source.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/tune/compile_only.hpp"
#include "tuner/tune/fault_restart.hpp"
#include "tuner/tune/gpu_backend.hpp"
#include "tuner/tune/gpu_run.hpp"
#include "tuner/tune/replay_backend.hpp"
#include "tuner/tune/shipped_configs.hpp"
#include "tuner/tune/tune_command.hpp"
#include "tuner/tune/tune_plots.hpp"

namespace {

fl::runtime::TargetArch target_for(std::string const& arch) {
  // sm90 means Hopper code: sm_90a allows wgmma and setmaxnreg, which plain sm_90 rejects.
  if (arch == "sm80") return fl::runtime::TargetArch::sm_80;
  if (arch == "sm89") return fl::runtime::TargetArch::sm_89;
  return fl::runtime::TargetArch::sm_90a;
}

// lost_after: set when run() answers kRestartForFreshContext (the config after which the context was lost).
int run(int argc, char const* const argv[], std::string& lost_after) {
  using namespace fl;
  // Outside the loops that stop at a boundary (StopOnSignals), SIGINT/SIGTERM end fa-tune at once with
  // 130/143 and no temporary file left, instead of by the signal.
  common::exit_on_signals();
  tuner::TuneOptions options;
  try {
    options = tuner::parse_tune_options(argc, argv);
  } catch (tuner::UsageError const& e) {
    std::fprintf(stderr, "fa-tune: %s (see fa-tune --help)\n", e.what());
    return common::kExitBadInput;
  }
  for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);
  // --time-limit covers a chain of fault restarts (tune/fault_restart.hpp), not each process of it.
  if (double const spent = tuner::seconds_since_chain_start(); options.time_limit_s)
    options.time_limit_s = std::max(0.0, *options.time_limit_s - spent);
  if (options.help) {
    std::fputs(options.help_text.c_str(), stdout);
    return common::kExitOk;
  }
  // Outputs are decided before the work: hours of tuning must not end in an unwritable path, and an
  // output the chosen mode cannot produce is refused instead of silently not written.
  std::vector<std::pair<char const*, std::string>> outputs;
  for (auto const& [option, path] : {std::pair{"--json", &options.json_path},
                                     {"--export-best", &options.export_best_path},
                                     {"--export-measurements", &options.export_measurements_path}})
    if (!path->empty()) outputs.emplace_back(option, *path);
  for (auto const& [option, path] : outputs) {
    if (auto problem = common::output_file_problem(path)) {
      std::fprintf(stderr, "fa-tune: %s %s: %s\n", option, path.c_str(), problem->c_str());
      return common::kExitBadInput;
    }
    if (options.compile_only) {
      std::fprintf(stderr, "fa-tune: %s is written from timed results; --compile-only times nothing\n",
                   option);
      return common::kExitBadInput;
    }
  }
  if (!options.report_dir.empty()) {
    // The folder is created when the report is written; what must hold now is that it can be (a path
    // under a regular file, or under /proc, ran the whole tuning and then wrote nothing).
    if (auto problem = common::output_folder_problem(options.report_dir)) {
      std::fprintf(stderr, "fa-tune: --report %s: %s\n", options.report_dir.c_str(), problem->c_str());
      return common::kExitBadInput;
    }
    outputs.emplace_back("--report", options.report_dir);
    if (options.compile_only) {
      std::fprintf(stderr, "fa-tune: --report plots timed results; --compile-only times nothing\n");
      return common::kExitBadInput;
    }
  }
  auto const arch = target_for(options.arch);
  auto kernels_dir = runtime::resolve_kernels_dir(
      options.kernels_dir.empty() ? std::nullopt : std::optional<std::filesystem::path>(options.kernels_dir));
  if (!kernels_dir) {
    std::fprintf(stderr, "fa-tune: %s\n", kernels_dir.error().one_line().c_str());
    return common::kExitBadInput;
  }
  std::filesystem::path const db_path =
      options.db_path.empty() ? db::default_database_path() : std::filesystem::path(options.db_path);
  // Checked (and salvaged when damaged, db/integrity.hpp) before any work: an unusable one is exit 2.
  (void)db::open_database(db_path);

  if (!options.merge_path.empty()) {
    auto database = db::open_database(db_path);
    auto const counts = db::merge_measurements(database, options.merge_path);
    std::printf(
        "merged %s into %s: %lld measurements imported, %lld already here (kept), %lld best configs "
        "added or made faster\n",
        options.merge_path.c_str(), db_path.string().c_str(), static_cast<long long>(counts.imported),
        static_cast<long long>(counts.already_here), static_cast<long long>(counts.best_updated));
    return common::kExitOk;
  }

  if (options.compile_only) {
    try {
      (void)tuner::selected_families(options);  // an unknown --family is bad input: exit 2 before compiling
    } catch (tuner::UsageError const& e) {
      std::fprintf(stderr, "fa-tune: %s\n", e.what());
      return common::kExitBadInput;
    }
    // Ctrl-C / SIGTERM: the rows finished so far are printed (their programs are cached: a rerun resumes).
    common::StopOnSignals const stop_on_signals;
    auto const report =
        tuner::run_compile_only(options, arch, kernels_dir.value(), db_path, device::limits_for(arch),
                                [] { return common::StopOnSignals::received(); });
    std::fputs(tuner::render_compile_only(report).c_str(), stdout);
    std::printf("database: %s\n", db_path.string().c_str());
    if (report.stop_signal) {
      std::printf(
          "fa-tune: stopped by signal %d after %zu configs; the programs compiled are cached (a rerun "
          "resumes)\n",
          report.stop_signal, report.rows.size());
      return common::exit_code_after_signal(report.stop_signal);
    }
    return common::kExitOk;
  }

  for (auto const& name : tuner::default_tuning_families(options))
    if (!device::find_family(name)) {
      std::fprintf(stderr, "fa-tune: --family '%s' is not one of: %s\n", name.c_str(),
                   device::family_names().c_str());
      return common::kExitBadInput;
    }

  // Every output of the run and the report, written once the table exists.
  auto write_outputs = [&](tuner::TuningReport const& report, std::string const& gpu_identity) {
    std::fputs(tuner::render_tuning(report).c_str(), stdout);
    if (int const restarts = tuner::fault_restarts_so_far(); restarts > 0)  // the table is the last process's
      std::printf(
          "fa-tune: restarted %d time%s after sticky CUDA faults (each culprit stored as failed); %.1f s "
          "since the first start\n",
          restarts, restarts == 1 ? "" : "s", tuner::seconds_since_chain_start());
    if (!options.json_path.empty())
      common::write_file_atomically(options.json_path, tuner::tuning_json(report, gpu_identity));
    if (!options.export_measurements_path.empty()) {
      common::write_file_atomically(options.export_measurements_path,
                                    tuner::measurements_tsv(report, options.command_line));
      std::printf("wrote the measurements of %zu problems to %s\n", report.rows.size(),
                  options.export_measurements_path.c_str());
    }
    if (!options.report_dir.empty()) {
      auto const written = tuner::write_tune_report(report, options.report_dir);
      std::printf("wrote the report (%zu files%s) to %s/report.md\n", written.written.size(),
                  !written.gnuplot_found     ? "; plots skipped: gnuplot missing"
                  : written.plots_failed > 0 ? "; gnuplot failed on some plots"
                                             : "",
                  options.report_dir.c_str());
    }
  };
  // --export-best: every best config measured under this GPU name, in db/seed/best_configs.tsv's format.
  auto export_best = [&](std::string const& gpu_name) {
    if (options.export_best_path.empty()) return;
    auto database = db::open_database(db_path);
    std::vector<db::BestConfig> measured;
    for (auto const& best : db::best_configs(database, gpu_name))
      if (best.source == "measured") measured.push_back(best);
    common::write_file_atomically(options.export_best_path, db::format_seed_configs(measured));
    std::printf("wrote %zu best configs to %s\n", measured.size(), options.export_best_path.c_str());
  };
  // Ctrl-C / SIGTERM: the candidate in flight finishes and is stored, the table so far is printed.
  common::StopOnSignals const stop_on_signals;
  auto const stop = [] { return common::StopOnSignals::received(); };
  // A sticky fault the process could not clear: start again with a fresh context (tune/fault_restart.hpp),
  // unless the run was stopped or the restarts are spent (then the table says so and the exit is 1).
  auto const restart_wanted = [](tuner::TuningReport const& report) {
    return report.context_lost && !report.stop_signal && tuner::fault_restart_left();
  };
  auto const exit_code = [](tuner::TuningReport const& report) {
    if (report.stop_signal) return common::exit_code_after_signal(report.stop_signal);
    // A kernel that crashed the context is a failed kernel: the run is incomplete (a rerun resumes after it).
    return report.context_lost ? common::kExitCheckFailed : common::kExitOk;
  };

  if (!options.gpus.empty() || options.all_gpus) {
    std::vector<std::string> user_args(argv + 1, argv + argc);
    return tuner::tune_on_gpus(options, user_args, arch, kernels_dir.value(), db_path,
                               [&](tuner::TuningReport const& report, std::string const& identity) {
                                 write_outputs(report, identity);
                                 export_best(report.gpu.name);  // the workers' rows, under the GPU model
                               });
  }

  if (!options.replay_path.empty()) {
    std::unique_ptr<tuner::ReplayBackend> backend;
    try {
      backend = std::make_unique<tuner::ReplayBackend>(options.replay_path,
                                                       tuner::pace_named(options.pace)->cut_clearly_slower);
    } catch (std::exception const& e) {
      std::fprintf(stderr, "fa-tune: --replay: %s\n", e.what());
      return common::kExitBadInput;
    }
    if (options.worker_gpu)
      options.command_line += " [GPU " + std::to_string(*options.worker_gpu) + ", replay]";
    auto const report = tuner::run_tuning(options, *backend, kernels_dir.value(), db_path, stop);
    if (restart_wanted(report)) {  // a recorded fault replays as one the process cannot clear
      lost_after = *report.context_lost;
      return tuner::kRestartForFreshContext;
    }
    write_outputs(report, backend->gpu().name);
    export_best(backend->gpu().name);  // under the replay's GPU name: never mistaken for a GPU's rows
    std::printf("database: %s\n", db_path.string().c_str());
    return exit_code(report);
  }

  auto device = runtime::query_device(options.worker_gpu.value_or(0));  // a --gpus worker: its own GPU
  if (!device && !outputs.empty()) {
    std::fprintf(stderr, "fa-tune: %s; %s %s needs timed results, nothing written\n",
                 device.error().message.c_str(), outputs.front().first, outputs.front().second.c_str());
    return common::kExitNoGpu;
  }
  if (device && !options.measured_on.empty()) {
    std::fprintf(stderr,
                 "fa-tune: --measured-on chooses the rows a machine without a GPU answers from; this one has "
                 "%s, which tunes (drop --measured-on)\n",
                 device->name.c_str());
    return common::kExitBadInput;
  }
  if (!device) {
    // No GPU: answer from the shipped best configs (and whatever this database measured before).
    auto const shipped =
        tuner::report_shipped_configs(arch, kernels_dir.value(), db_path, tuner::selected_problems(options),
                                      tuner::default_tuning_families(options), options.measured_on);
    if (!shipped.measured_on_matched) {
      std::fprintf(stderr, "fa-tune: --measured-on '%s' matches none of the GPUs known for %s: %s\n",
                   options.measured_on.c_str(), std::string(runtime::arch_name(arch)).c_str(),
                   tuner::describe_gpus(shipped).c_str());
      return common::kExitBadInput;
    }
    if (shipped.gpus.size() > 1) {
      std::string const choice =
          options.measured_on.empty()
              ? "a problem tuned on several answers with the fastest (--measured-on NAME keeps one)"
              : "answering from those whose name contains '" + options.measured_on + "'";
      std::printf("Best configs known for %s come from %zu GPUs: %s; %s\n",
                  std::string(runtime::arch_name(arch)).c_str(), shipped.gpus.size(),
                  tuner::describe_gpus(shipped).c_str(), choice.c_str());
    }
    std::printf(
        "Best configs known for %s: %d (%d shipped seeds loaded now); the %d that answer the problems asked, "
        "compile-checked here:\n%s",
        std::string(runtime::arch_name(arch)).c_str(), shipped.configs, shipped.seeds_loaded, shipped.listed,
        shipped.table.c_str());
    std::printf(
        "\nConfigs to use for the problems asked (%d tuned, %d from the nearest tuned shape, %d family "
        "defaults):\n%s",
        shipped.tuned, shipped.nearest, shipped.defaults, shipped.answers.c_str());
    std::printf("fa-tune: %s; timing needs an %s GPU (the table above is what was measured elsewhere)\n",
                device.error().message.c_str(), options.arch.c_str());
    return shipped.compile_failures > 0 ? common::kExitCheckFailed : common::kExitOk;
  }
  if (auto mismatch = tuner::arch_mismatch(arch, device.value())) {
    std::fprintf(stderr, "fa-tune: %s\n", mismatch->c_str());
    return common::kExitBadInput;
  }
  auto context = runtime::PrimaryContext::retain(device->ordinal);
  if (!context) runtime::exit_no_gpu(context.error());
  if (options.worker_gpu)  // which device measured this worker's rows, kept with its tuning run
    options.command_line +=
        " [GPU " + std::to_string(device->ordinal) + " " +
        device::read_gpu_uuid(device->ordinal).value_or("(no UUID: nvidia-smi did not answer)") + "]";
  tuner::GpuBackend backend(options.jobs, arch, kernels_dir.value(), db_path, device.value(),
                            *tuner::pace_named(options.pace), options.forward_store);
  auto const report = tuner::run_tuning(options, backend, kernels_dir.value(), db_path, stop);
  if (restart_wanted(report)) {
    lost_after = *report.context_lost;
    return tuner::kRestartForFreshContext;  // main() restarts once the context and database are closed
  }
  write_outputs(report, device->identity());
  export_best(device->name);
  std::printf("database: %s\n", db_path.string().c_str());
  return exit_code(report);
}

}  // namespace

int main(int argc, char* argv[]) {
  std::string lost_after;
  int const code = [&] {
    try {
      return run(argc, argv, lost_after);
    } catch (fl::db::UnusableDatabaseError const& e) {  // the file named cannot hold our data
      std::fprintf(stderr, "fa-tune: %s\n", e.what());
      return fl::common::kExitBadInput;
    } catch (fl::db::DatabaseError const& e) {  // failed during the run: disk full, I/O error, a lock held
      std::fprintf(stderr, "fa-tune: %s\n", e.what());
      return fl::common::kExitBadInput;
    } catch (std::exception const& e) {
      std::fprintf(stderr, "fa-tune: %s\n", e.what());
      return 1;
    }
  }();
  if (code != fl::tuner::kRestartForFreshContext) return code;
  fl::tuner::restart_for_fresh_context(argv, lost_after);  // returns only if the exec failed
  return fl::common::kExitCheckFailed;
}
