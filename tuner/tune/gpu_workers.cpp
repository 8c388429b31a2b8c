#include "tuner/tune/gpu_workers.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "db/schema.hpp"
#include "device/families/registry.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/tune/db_rows.hpp"
#include "tuner/tune/source_hash.hpp"
#include "tuner/tune/stored_rows.hpp"
#include "tuner/tune/tune_loop.hpp"

extern char** environ;

namespace fl::tuner {

namespace {
// Options the workers must not see: --gpus would make each a coordinator; the outputs are the whole run's,
// written once by the coordinator from the merged table.
constexpr std::array<std::string_view, 5> kCoordinatorOnly{"--gpus", "--json", "--report", "--export-best",
                                                           "--export-measurements"};
constexpr auto kPollInterval = std::chrono::milliseconds(100);

bool coordinator_only(std::string_view arg, bool& takes_next) {
  for (auto const name : kCoordinatorOnly) {
    if (arg == name) {
      takes_next = true;
      return true;
    }
    if (arg.starts_with(name) && arg.size() > name.size() && arg[name.size()] == '=') return true;
  }
  return false;
}

pid_t spawn_worker(std::filesystem::path const& self, std::vector<std::string> const& args) {
  std::vector<std::string> env_text{"CUDA_DEVICE_ORDER=PCI_BUS_ID"};
  for (char** e = environ; *e != nullptr; ++e)
    if (!std::string_view(*e).starts_with("CUDA_DEVICE_ORDER=")) env_text.emplace_back(*e);
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  std::string program = self.string();
  std::vector<std::string> argv_text{program};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);  // stdout: the merged table only
  pid_t pid = 0;
  int const rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start the worker " + program + ": " + std::strerror(rc));
  return pid;
}
}  // namespace

std::vector<std::string> worker_arguments(std::vector<std::string> const& user_args, int gpu, int k, int n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < user_args.size(); ++i) {
    bool takes_next = false;
    if (coordinator_only(user_args[i], takes_next)) {
      if (takes_next) ++i;
      continue;
    }
    out.push_back(user_args[i]);
  }
  out.insert(out.end(), {std::string("--gpu-worker"), std::to_string(gpu), std::string("--shard"),
                         std::to_string(k) + "/" + std::to_string(n)});
  return out;
}

std::vector<WorkerExit> run_gpu_workers(std::filesystem::path const& self,
                                        std::vector<std::string> const& user_args,
                                        std::vector<int> const& gpus,
                                        std::function<bool()> const& stop_requested) {
  std::vector<pid_t> pids;
  std::vector<WorkerExit> exits(gpus.size());
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    exits[k].gpu = gpus[k];
    pids.push_back(spawn_worker(self, worker_arguments(user_args, gpus[k], int(k) + 1, int(gpus.size()))));
  }
  std::size_t running = pids.size();
  bool forwarded = false;
  while (running > 0) {
    if (!forwarded && stop_requested && stop_requested()) {
      for (std::size_t k = 0; k < pids.size(); ++k)
        if (pids[k] > 0) ::kill(pids[k], SIGTERM);  // each finishes and stores its candidate in flight
      forwarded = true;
    }
    for (std::size_t k = 0; k < pids.size(); ++k) {
      if (pids[k] <= 0) continue;
      int status = 0;
      pid_t const done = ::waitpid(pids[k], &status, WNOHANG);
      if (done == 0 || (done < 0 && errno == EINTR)) continue;
      if (done > 0 && WIFSIGNALED(status)) {
        exits[k].signal = WTERMSIG(status);
        exits[k].exit_code = 128 + exits[k].signal;
      } else if (done > 0) {
        exits[k].exit_code = WEXITSTATUS(status);
      }
      pids[k] = 0;
      --running;
    }
    if (running > 0) std::this_thread::sleep_for(kPollInterval);
  }
  return exits;
}

TuningReport report_from_store(
    TuneOptions const& options, db::GpuKey const& gpu, std::string const& nvrtc_version,
    std::filesystem::path const& kernels_dir, std::filesystem::path const& db_path,
    std::function<bool(device::Family const&, device::Problem const&)> const& can_measure,
    std::int64_t before_run) {
  auto database = db::open_database(db_path);
  TuningReport report;
  report.gpu = gpu;
  report.nvrtc_version = nvrtc_version;
  report.strategy = options.strategy;
  report.from_store = true;
  for (auto const& [problem, index, family] : run_pairs(options, can_measure)) {
    std::string const name(family->name());
    auto hash = family_source_hash(*family, problem, kernels_dir);
    if (!hash) throw std::runtime_error(hash.error().one_line());
    TuneRow row;
    row.family = name;
    row.problem = device::describe(problem);
    row.problem_spec = problem;
    row.space_size = family_space(*family, problem).valid_points().size();
    row.default_config = device::to_string(family->default_config(problem));
    row.default_verdict = "not measured";
    db::MeasurementKey const prefix{gpu, nvrtc_version, hash.value(), name, "", problem_key(problem)};
    std::optional<db::Measurement> best;
    for (auto& [config, m] : db::measurements_for(database, prefix)) {
      if (timed_otherwise(m)) continue;  // not reached by the workers, which would have timed it again
      ++(m.run_id && *m.run_id > before_run ? row.evaluated : row.resumed);
      bool const ok = m.verdict == "ok" && m.median_ms;
      if (!ok) ++row.rejected;
      if (ok && (!best || *m.median_ms < *best->median_ms)) {
        best = m;
        row.best_config = config;
      }
      if (config == row.default_config) {
        row.default_verdict = m.verdict;
        row.default_diagnosis = m.diagnosis;
        if (ok) row.default_tflops = m.tflops.value_or(0.0);
      }
      row.candidates.emplace_back(config, std::move(m));
      row.costs.emplace_back();  // where a worker's time went stays in its own output
    }
    std::size_t const found = row.candidates.size();
    row.end = found == 0                ? SearchEnd::not_reached
              : found >= row.space_size ? SearchEnd::exhausted
              : options.budget          ? SearchEnd::budget
              : options.time_limit_s    ? SearchEnd::time
                                        : SearchEnd::stopped;
    if (best) {
      row.best_ms = *best->median_ms;
      row.best_tflops = best->tflops.value_or(0.0);
      db::store_best_config(database, db::BestConfig{gpu, problem_key(problem), name, row.best_config,
                                                     row.best_ms, row.best_tflops, "measured", nvrtc_version,
                                                     hash.value(), best->measured_at});
    }
    report.rows.push_back(std::move(row));
  }
  report.winners = winners_of(report.rows);
  return report;
}

}  // namespace fl::tuner
