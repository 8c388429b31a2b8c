// fa-tune --gpus without GPUs: workers in several processes on one database, answering from the recorded
// H200 run. Split and merge give the single run's result; a worker killed with SIGKILL loses nothing it
// finished and a rerun of its shard resumes; the command starts one process per GPU and merges them.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "db/schema.hpp"
#include "db/seed_configs.hpp"
#include "db/tuning_runs.hpp"
#include "runtime/kernel_source.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tests/tool_process.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/tune/gpu_workers.hpp"
#include "tuner/tune/replay_backend.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;

namespace {

std::filesystem::path fixture() {
  return std::filesystem::path(FA_TEST_DATA_DIR) / "fa2_sm80_h200_bf16_d128_n4096_full.tsv";
}

TuneOptions options_for(std::vector<std::string> args) {
  std::vector<char const*> argv{"fa-tune", "--seqlen", "4096", "--causal", "no"};
  for (auto const& a : args) argv.push_back(a.c_str());
  return parse_tune_options(int(argv.size()), argv.data());
}

// The replay, with a hook before every evaluation (to die there, as kill -9 would end a worker).
class HookedEvaluator final : public Evaluator {
 public:
  HookedEvaluator(Evaluator& inner, std::function<void()> const& hook) : inner_(inner), hook_(hook) {}
  Evaluation evaluate(Config const& config, Problem const& problem) override {
    if (hook_) hook_();
    return inner_.evaluate(config, problem);
  }
  void hear_best(std::optional<double> best) override { inner_.hear_best(best); }

 private:
  Evaluator& inner_;
  std::function<void()> const& hook_;
};

class HookedReplay final : public TuningBackend {
 public:
  explicit HookedReplay(std::function<void()> hook) : replay_(fixture()), hook_(std::move(hook)) {}
  db::GpuKey gpu() const override { return replay_.gpu(); }
  std::string nvrtc_version() const override { return replay_.nvrtc_version(); }
  int compile_workers() const override { return 0; }
  Evaluator& evaluator_for(Family const& family) override {
    hooked_ = std::make_unique<HookedEvaluator>(replay_.evaluator_for(family), hook_);
    return *hooked_;
  }
  bool can_measure(Family const& family, Problem const& problem) const override {
    return replay_.can_measure(family, problem);
  }

 private:
  ReplayBackend replay_;
  std::function<void()> hook_;
  std::unique_ptr<HookedEvaluator> hooked_;
};

int stored_rows(std::filesystem::path const& db_path) {
  auto database = db::open_database(db_path);
  auto count = database.prepare("SELECT count(*) FROM measurements");
  count.step();
  return int(count.column_int64(0));
}

}  // namespace

TEST_CASE("two workers in two processes split one problem, a killed one loses nothing and resumes",
          "[tuner][tune]") {
  if (!std::filesystem::exists(fixture())) {
    WARN("skipped: " << fixture() << " is not committed");
    return;
  }
  test::TempKernelsDir dir;
  auto const kernels = runtime::resolve_kernels_dir(std::nullopt).value();
  auto const db_path = dir.path() / "shared.sqlite";
  // The single-GPU answer to compare with, in its own database.
  ReplayBackend alone_backend(fixture());
  auto const alone = run_tuning(options_for({}), alone_backend, kernels, dir.path() / "alone.sqlite");
  REQUIRE(alone.rows.size() == 1);
  std::int64_t before_run = 0;
  {
    auto database = db::open_database(db_path);  // created and migrated before the workers open it
    before_run = db::begin_tuning_run(database, "coordinator (test)");
  }

  constexpr int kKilledAfter = 20;
  std::vector<pid_t> workers;
  for (int k = 1; k <= 2; ++k) {
    pid_t const child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      int evaluations = 0;
      HookedReplay backend([&] {
        if (k == 2 && ++evaluations > kKilledAfter) raise(SIGKILL);  // worker 2 dies at its 21st candidate
      });
      auto const options =
          options_for({"--gpu-worker", std::to_string(k - 1), "--shard", std::to_string(k) + "/2"});
      (void)run_tuning(options, backend, kernels, db_path);
      _exit(0);
    }
    workers.push_back(child);
  }
  for (std::size_t k = 0; k < workers.size(); ++k) {
    int status = 0;
    REQUIRE(waitpid(workers[k], &status, 0) == workers[k]);
    if (k == 1) {
      REQUIRE(WIFSIGNALED(status));
      CHECK(WTERMSIG(status) == SIGKILL);
    } else {
      CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }
  }
  auto const space = alone.rows[0].space_size;
  // Worker 1's half + what worker 2 finished; worker 1's cross-check timing of the reference (worker 2's
  // default) is one more row when it got there before worker 2 stored it (a race of the two processes).
  int const finished = int(space - space / 2) + kKilledAfter;
  int const stored = stored_rows(db_path);
  CHECK((stored == finished || stored == finished + 1));

  auto const can_measure = [&](Family const& f, Problem const& p) { return alone_backend.can_measure(f, p); };
  auto const partial = report_from_store(options_for({}), alone_backend.gpu(), "replay", kernels, db_path,
                                         can_measure, before_run);
  REQUIRE(partial.rows.size() == 1);
  CHECK(partial.rows[0].evaluated == stored_rows(db_path));
  CHECK(partial.rows[0].end == SearchEnd::stopped);

  // The rerun of worker 2's shard measures only what it had not finished.
  ReplayBackend rerun_backend(fixture());
  auto const rerun =
      run_tuning(options_for({"--gpu-worker", "1", "--shard", "2/2"}), rerun_backend, kernels, db_path);
  REQUIRE(rerun.rows.size() == 1);
  CHECK(rerun.rows[0].resumed == kKilledAfter + (stored - finished));
  CHECK(rerun.rows[0].evaluated + rerun.rows[0].resumed == int(space / 2));

  auto const merged = report_from_store(options_for({}), alone_backend.gpu(), "replay", kernels, db_path,
                                        can_measure, before_run);
  REQUIRE(merged.rows.size() == 1);
  CHECK(stored_rows(db_path) == int(space));
  CHECK(merged.rows[0].end == SearchEnd::exhausted);
  CHECK(merged.rows[0].rejected == alone.rows[0].rejected);
  CHECK(merged.rows[0].best_config == alone.rows[0].best_config);
  CHECK(merged.rows[0].best_ms == alone.rows[0].best_ms);
  CHECK(merged.rows[0].default_verdict == "ok");
}

TEST_CASE("worker command lines: the user's arguments without --gpus and the outputs, plus the shard",
          "[tuner][tune]") {
  auto const args = worker_arguments({"--replay", "r.tsv", "--gpus", "0,1", "--json=x.json", "--report",
                                      "dir", "--export-measurements", "m.tsv", "--budget", "8"},
                                     1, 2, 2);
  CHECK(args == std::vector<std::string>{"--replay", "r.tsv", "--budget", "8", "--gpu-worker", "1", "--shard",
                                         "2/2"});
}

TEST_CASE("fa-tune --gpus 0,1 over a replay: two worker processes, one merged table, the single run's winner",
          "[tuner][tune][cli]") {
  if (!std::filesystem::exists(fixture())) {
    WARN("skipped: " << fixture() << " is not committed");
    return;
  }
  test::TempKernelsDir dir;
  auto const db_path = dir.path() / "tune.sqlite";
  auto const tool = fl::test::sibling_binary("fa-tune").string() + " --replay " + fixture().string() +
                    " --causal no --db " + db_path.string();
  auto const best_tsv = dir.path() / "best.tsv";
  auto const outcome = fl::test::run_tool(tool + " --gpus 0,1 --export-best " + best_tsv.string());
  INFO(outcome.out << outcome.err);
  CHECK(outcome.exit_code == 0);
  // The coordinator exports what its workers measured (the workers are given no outputs).
  CHECK_THAT(outcome.out, Catch::Contains("wrote 1 best configs to " + best_tsv.string()));
  auto const exported = db::parse_seed_configs(fl::test::read_text(best_tsv));
  REQUIRE(exported.size() == 1);
  CHECK(exported[0].config ==
        "kBlockM=128,kBlockN=32,kEpilogueSmem=1,kNWarps=4,kQInRegs=0,kStages=2,kWarpsN=1");
  CHECK_THAT(exported[0].gpu.name, Catch::StartsWith("replay of "));
  CHECK_THAT(outcome.out,
             Catch::Contains("--gpus: 2 worker(s)") &&
                 Catch::Contains("kBlockM=128,kBlockN=32,kEpilogueSmem=1,kNWarps=4,kQInRegs=0,kStages=2,"
                                 "kWarpsN=1  1.818  302.4") &&
                 Catch::Contains("space done  168"));
  auto database = db::open_database(db_path);
  auto runs = database.prepare("SELECT count(*) FROM tuning_runs WHERE command LIKE '%[GPU _, replay]'");
  runs.step();
  CHECK(runs.column_int64(0) == 2);
  // The merged best keeps the time its worker measured it, not the coordinator's (db/README.md).
  auto measured = database.prepare("SELECT measured_at FROM measurements WHERE config = ?");
  measured.bind_text(1, exported[0].config);
  REQUIRE(measured.step());
  CHECK(exported[0].recorded_at == measured.column_text(0));

  for (auto const& [bad, named] : std::vector<std::pair<std::string, std::string>>{
           {"--gpus 0,0", "--gpus 0,0 names GPU 0 twice"},
           {"--gpus x", "--gpus 'x' is not a whole number"},
           {"--gpus 64", "--gpus 64 is outside 0..63"},
           {"--gpus all", "--gpus all counts the GPUs present"},
           {"--gpus 0 --shard 1/2", "--gpu-worker and --shard are what it gives"}}) {
    auto const refused = fl::test::run_tool(tool + " " + bad);
    INFO(bad << " -> " << refused.err);
    CHECK(refused.exit_code == 2);
    CHECK(refused.error_lines() == 1);
    CHECK_THAT(refused.err, Catch::Contains(named));
  }
}

TEST_CASE("two hosts tune halves into their own databases, and fa-tune --merge combines them",
          "[tuner][tune][cli]") {
  if (!std::filesystem::exists(fixture())) {
    WARN("skipped: " << fixture() << " is not committed");
    return;
  }
  test::TempKernelsDir dir;
  auto const kernels = runtime::resolve_kernels_dir(std::nullopt).value();
  ReplayBackend alone_backend(fixture());
  auto const alone = run_tuning(options_for({}), alone_backend, kernels, dir.path() / "alone.sqlite");
  for (int k = 1; k <= 2; ++k) {
    ReplayBackend host(fixture());
    (void)run_tuning(options_for({"--shard", std::to_string(k) + "/2"}), host, kernels,
                     dir.path() / ("host" + std::to_string(k) + ".sqlite"));
  }
  auto const base =
      fl::test::sibling_binary("fa-tune").string() + " --db " + (dir.path() / "host1.sqlite").string();
  auto const merged = fl::test::run_tool(base + " --merge " + (dir.path() / "host2.sqlite").string());
  INFO(merged.out << merged.err);
  CHECK(merged.exit_code == 0);
  // Each half holds its own candidates and, from the workers' cross-check, the reference (the default).
  CHECK_THAT(merged.out, Catch::Contains(std::to_string(alone.rows[0].space_size / 2 - 1) +
                                         " measurements imported, 1 already here (kept)"));
  CHECK(stored_rows(dir.path() / "host1.sqlite") == int(alone.rows[0].space_size));
  auto const report = report_from_store(
      options_for({}), alone_backend.gpu(), "replay", kernels, dir.path() / "host1.sqlite",
      [&](Family const& f, Problem const& p) { return alone_backend.can_measure(f, p); }, 0);
  REQUIRE(report.rows.size() == 1);
  CHECK(report.rows[0].end == SearchEnd::exhausted);
  CHECK(report.rows[0].best_config == alone.rows[0].best_config);

  auto const refused = fl::test::run_tool(base + " --merge " + (dir.path() / "nothing.sqlite").string());
  CHECK(refused.exit_code == 2);
  CHECK(refused.error_lines() == 1);
  CHECK_THAT(refused.err, Catch::Contains("nothing.sqlite is not a file"));
  auto const combined = fl::test::run_tool(base + " --merge x.sqlite --json r.json");
  CHECK(combined.exit_code == 2);
  CHECK_THAT(combined.err, Catch::Contains("--merge writes only the database"));
}

// The coordinator's table is read from the store after the workers: a row timed with another protocol than
// fa-tune's, which no worker reached (the workers time such a row again), is neither counted nor ranked.
TEST_CASE("the table from the store leaves out rows timed with another protocol", "[tuner][tune]") {
  if (!std::filesystem::exists(fixture())) {
    WARN("skipped: " << fixture() << " is not committed");
    return;
  }
  test::TempKernelsDir dir;
  auto const kernels = runtime::resolve_kernels_dir(std::nullopt).value();
  auto const db_path = dir.path() / "tuned.sqlite";
  ReplayBackend backend(fixture());
  auto const tuned = run_tuning(options_for({}), backend, kernels, db_path);
  REQUIRE(tuned.rows.size() == 1);
  REQUIRE_FALSE(tuned.rows[0].best_config.empty());
  {
    // The slowest timed row, settled and now the fastest: it would be the best if it were counted.
    auto database = db::open_database(db_path);
    database.execute(
        "UPDATE measurements SET settle_ms = 200, median_ms = 0.001, p20_ms = 0.001, p80_ms = 0.001, "
        "min_ms = 0.001 WHERE measurement_id = (SELECT measurement_id FROM measurements WHERE verdict = "
        "'ok' ORDER BY median_ms DESC LIMIT 1)");
  }
  auto const can_measure = [&](Family const& f, Problem const& p) { return backend.can_measure(f, p); };
  auto const report =
      report_from_store(options_for({}), backend.gpu(), "replay", kernels, db_path, can_measure, 0);
  REQUIRE(report.rows.size() == 1);
  CHECK(report.rows[0].evaluated == stored_rows(db_path) - 1);
  CHECK(report.rows[0].best_config == tuned.rows[0].best_config);
  CHECK(report.rows[0].best_ms == tuned.rows[0].best_ms);
}
