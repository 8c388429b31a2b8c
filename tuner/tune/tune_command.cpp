#include "tuner/tune/tune_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "db/schema.hpp"
#include "numerics/precision.hpp"
#include "runtime/compile_request.hpp"
#include "tuner/compile/compile_config.hpp"
#include "tuner/compile/compile_pool.hpp"
#include "tuner/families/registry.hpp"
#include "tuner/measure/gpu_telemetry.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/tune/compile_only.hpp"
#include "tuner/tune/gpu_evaluator.hpp"
#include "tuner/tune/reference_cache.hpp"
#include "tuner/tune/source_hash.hpp"
#include "tuner/tune/tune_loop.hpp"

namespace fl::tuner {

namespace {
constexpr std::int64_t kHeadlineTokens = 16384;  // b = tokens / n
constexpr int kHeadlineWidth = 2048;             // h = width / d
constexpr int kTimingWarmup = 5;
constexpr int kTimingRuns = 30;  // >= 20 by the measurement protocol; 30 keeps p20/p80 stable
// Candidates compiled ahead per compile worker. Exhaustive and random know their order: one compile in flight
// and one queued per worker keeps every worker busy while the GPU thread takes them one by one. Annealing and
// bayes only guess (neighbours, best expected improvement): one per worker, so guesses never queue in front
// of the proposal the GPU thread waits for (that one is submitted urgent, to the front of the queue).
constexpr std::size_t kExactLookaheadPerWorker = 2;
constexpr std::size_t kGuessLookaheadPerWorker = 1;

// The best configs stored for the same family, dtype, head dim, mask and direction at other shapes on this
// GPU, nearest sequence length first (warm start for a small budget at a new shape).
std::vector<Config> warm_start_configs(db::Database& database, db::GpuKey const& gpu,
                                       std::string const& family, Problem const& problem) {
  auto const key = problem_key(problem);
  std::vector<std::pair<double, Config>> found;
  for (auto const& best : db::best_configs(database, gpu.name)) {
    auto const& p = best.problem;
    if (best.family != family || p.dtype != key.dtype || p.head_dim != key.head_dim ||
        p.causal != key.causal || p.direction != key.direction ||
        (p.seqlen_q == key.seqlen_q && p.seqlen_k == key.seqlen_k))
      continue;
    if (auto config = parse_config(best.config))
      found.emplace_back(std::fabs(std::log2(double(p.seqlen_q) / key.seqlen_q)), *config);
  }
  std::stable_sort(found.begin(), found.end(),
                   [](auto const& a, auto const& b) { return a.first < b.first; });
  std::vector<Config> configs;
  for (auto const& [distance, config] : found)
    if (std::find(configs.begin(), configs.end(), config) == configs.end()) configs.push_back(config);
  return configs;
}

}  // namespace

std::vector<Problem> selected_problems(TuneOptions const& options) {
  std::vector<Problem> problems;
  for (auto const& kind : selected_problem_classes(options))
    for (int n : options.seqlens) {
      Problem p = kind;
      auto& s = p.shape;
      s.seqlen_q = s.seqlen_k = n;
      if (options.batch) {
        s.batch = *options.batch;
        s.heads_q = s.heads_kv = *options.heads;
      } else {
        s.batch = static_cast<int>(std::max<std::int64_t>(1, options.tokens.value_or(kHeadlineTokens) / n));
        s.heads_q = s.heads_kv = std::max(1, kHeadlineWidth / s.head_dim);
      }
      problems.push_back(p);
    }
  return problems;
}

std::vector<std::string> default_tuning_families(TuneOptions const& options) {
  if (!options.families.empty()) return options.families;
  std::vector<std::string> names;
  // fa3_sm90 needs Hopper's wgmma and TMA: part of the default set only for --arch sm90 (sm_90a code).
  for (auto const& f : all_families())
    if (f->name().starts_with("fa2") || (f->name().starts_with("fa3") && options.arch == "sm90"))
      names.emplace_back(f->name());
  return names;
}

std::optional<std::string> arch_mismatch(runtime::TargetArch arch, runtime::DeviceInfo const& device) {
  auto const best = runtime::arch_for_device(device.cc_major, device.cc_minor);
  if (best && (best.value() == arch || (arch == runtime::TargetArch::sm_80 && device.cc_major == 8)))
    return std::nullopt;
  return "--arch " + std::string(runtime::arch_name(arch)) + " does not match the present GPU " +
         device.name + " (compute capability " + std::to_string(device.cc_major) + "." +
         std::to_string(device.cc_minor) + ")";
}

db::GpuKey gpu_key(runtime::DeviceInfo const& device) {
  auto const release = read_driver_release(device.ordinal);
  return db::GpuKey{device.name,
                    device.cc_major,
                    device.cc_minor,
                    device.sm_count,
                    release.value_or(std::to_string(device.driver_version)),
                    device.driver_version};
}

TuningReport run_tuning(TuneOptions const& options, runtime::TargetArch arch,
                        std::filesystem::path const& kernels_dir, std::filesystem::path const& db_path,
                        runtime::DeviceInfo const& device) {
  auto database = db::open_database(db_path);
  CompilePool pool(options.jobs, db_path);  // creates and migrates the file before its workers open it
  CompileService invalidator(db_path);
  ReferenceCache references;
  CompileSpec const spec{.arch = arch, .kernels_dir = kernels_dir, .mutant_switches = {}};
  TuningReport report;
  report.gpu = gpu_key(device);
  report.nvrtc_version = runtime::nvrtc_version();
  report.compile_workers = pool.workers();
  TuneLimits limits;
  limits.budget = options.budget;
  auto const kind = *parse_strategy(options.strategy);
  bool const exact_order = kind == StrategyKind::exhaustive || kind == StrategyKind::random;
  limits.lookahead =
      (exact_order ? kExactLookaheadPerWorker : kGuessLookaheadPerWorker) * std::size_t(pool.workers());
  if (options.time_limit_s)
    limits.deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(*options.time_limit_s));

  for (int run = 1; run <= options.noise_runs && !report.context_lost; ++run) {
    auto const run_id = db::begin_tuning_run(
        database, options.command_line,
        run == 1 ? std::nullopt : std::optional<std::int64_t>(report.run_ids.front()), run);
    report.run_ids.push_back(run_id);
    limits.run_id = run_id;
    if (run > 1) limits.remeasure_run = run_id;
    std::size_t row_index = 0;
    for (auto const& family_name : default_tuning_families(options)) {
      auto family = find_family(family_name);
      if (!family) continue;  // validated by the caller
      for (auto const& problem : selected_problems(options)) {
        if (report.context_lost) break;
        if (family->unsupported(problem)) continue;
        auto hash = family_source_hash(*family, problem, kernels_dir);
        if (!hash) throw std::runtime_error(hash.error().one_line());
        TuneStore const store{&database, report.gpu, report.nvrtc_version, hash.value()};
        auto const space = family_space(*family, problem);
        auto strategy = make_strategy(kind, space, options.seed);
        GpuEvaluator evaluator(*family, pool, invalidator, spec, device, {kTimingWarmup, kTimingRuns},
                               references);
        // The default first: every row gets its baseline, measured while the GPU state is fresh.
        Config const fallback = family->default_config(problem);
        limits.first = {fallback};
        if (options.warm_start)
          for (auto const& c : warm_start_configs(database, report.gpu, std::string(family->name()), problem))
            if (c != fallback) limits.first.push_back(c);
        std::string const label = std::string(family->name()) + " " + describe(problem) +
                                  (options.noise_runs > 1 ? " run " + std::to_string(run) : "");
        Progress progress(label, space.valid_points().size());
        auto outcome = tune_problem(*family, problem, *strategy, space, evaluator, store, limits, &progress);
        progress.finish();
        if (outcome.context_lost) report.context_lost = outcome.context_lost;

        if (run > 1) {
          if (row_index < report.rows.size()) {
            auto comparison = compare_runs(report.rows[row_index].candidates, outcome.rows, run);
            comparison.wall_s = outcome.wall_s;
            comparison.compile_wait_s = outcome.compile_wait_s;
            comparison.verify_s = outcome.verify_s;
            comparison.timing_s = outcome.timing_s;
            comparison.compile_cpu_s = outcome.compile_cpu_s;
            report.rows[row_index].noise.push_back(std::move(comparison));
          }
          ++row_index;
          continue;
        }
        TuneRow row;
        row.family = std::string(family->name());
        row.problem = describe(problem);
        row.evaluated = outcome.evaluated;
        row.resumed = outcome.resumed;
        row.rejected = outcome.rejected;
        row.wall_s = outcome.wall_s;
        row.compile_wait_s = outcome.compile_wait_s;
        row.verify_s = outcome.verify_s;
        row.timing_s = outcome.timing_s;
        row.compile_cpu_s = outcome.compile_cpu_s;
        if (outcome.best) {
          row.best_config = to_string(*outcome.best);
          row.best_ms = outcome.best_stats->median_ms;
          row.best_tflops = outcome.best_tflops;
        }
        row.default_config = to_string(fallback);
        row.default_verdict = "not measured";
        for (auto const& [config, m] : outcome.rows)
          if (config == row.default_config) {
            row.default_verdict = m.verdict;
            row.default_diagnosis = m.diagnosis;
            if (m.verdict == "ok") row.default_tflops = m.tflops.value_or(0.0);
          }
        row.candidates = std::move(outcome.rows);
        report.rows.push_back(std::move(row));
        ++row_index;
      }
    }
  }
  report.reference_s = references.seconds_spent();
  return report;
}

}  // namespace fl::tuner
