#include "tuner/tune/tune_command.hpp"

#include <chrono>
#include <cstdio>

#include "db/schema.hpp"
#include "db/tuning_store.hpp"
#include "numerics/precision.hpp"
#include "runtime/compile_request.hpp"
#include "tuner/compile/compile_config.hpp"
#include "tuner/families/registry.hpp"
#include "tuner/report/table.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/tune/compile_only.hpp"
#include "tuner/tune/gpu_evaluator.hpp"
#include "tuner/tune/source_hash.hpp"
#include "tuner/tune/tune_loop.hpp"

namespace fl::tuner {

namespace {
constexpr std::int64_t kHeadlineTokens = 16384;  // b = tokens / n
constexpr int kHeadlineWidth = 2048;             // h = width / d
constexpr int kTimingWarmup = 5;
constexpr int kTimingRuns = 30;  // >= 20 by the measurement protocol; 30 keeps p20/p80 stable
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
  for (auto const& f : all_families())
    if (f->name().starts_with("fa2")) names.emplace_back(f->name());
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

std::vector<TuneRow> run_tuning(TuneOptions const& options, runtime::TargetArch arch,
                                std::filesystem::path const& kernels_dir,
                                std::filesystem::path const& db_path, runtime::DeviceInfo const& device) {
  auto database = db::open_database(db_path);
  CompileService compiler(db_path);
  CompileSpec const spec{.arch = arch, .kernels_dir = kernels_dir, .mutant_switches = {}};
  db::GpuKey const gpu{device.name, device.cc_major, device.cc_minor, device.sm_count,
                       std::to_string(device.driver_version)};
  TuneLimits limits;
  limits.budget = options.budget;
  if (options.time_limit_s)
    limits.deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(*options.time_limit_s));

  std::vector<TuneRow> rows;
  for (auto const& family_name : default_tuning_families(options)) {
    auto family = find_family(family_name);
    if (!family) continue;  // validated by the caller
    for (auto const& problem : selected_problems(options)) {
      if (family->unsupported(problem)) continue;
      auto hash = family_source_hash(*family, problem, kernels_dir);
      if (!hash) throw std::runtime_error(hash.error().one_line());
      TuneStore const store{&database, gpu, runtime::nvrtc_version(), hash.value()};
      auto const space = family_space(*family, problem);
      auto strategy = make_strategy(*parse_strategy(options.strategy), space, options.seed);
      GpuEvaluator evaluator(*family, compiler, spec, device, {kTimingWarmup, kTimingRuns});
      Progress progress(std::string(family->name()) + " " + describe(problem), space.valid_points().size());
      auto const outcome =
          tune_problem(*family, problem, *strategy, space, evaluator, store, limits, &progress);
      progress.finish();

      TuneRow row;
      row.family = std::string(family->name());
      row.problem = describe(problem);
      row.evaluated = outcome.evaluated;
      row.resumed = outcome.resumed;
      row.rejected = outcome.rejected;
      if (outcome.best) {
        row.best_config = to_string(*outcome.best);
        row.best_ms = outcome.best_stats->median_ms;
        row.best_tflops = outcome.best_tflops;
      }
      // The default config is measured too (once; the store remembers it), so every row has its ratio.
      Config const fallback = family->default_config(problem);
      row.default_config = to_string(fallback);
      db::MeasurementKey key{gpu,        store.nvrtc_version, store.source_hash,
                             row.family, row.default_config,  problem_key(problem)};
      auto measured = db::find_measurement(database, key);
      if (!measured) {
        auto const e = evaluator.evaluate(fallback, problem);
        db::Measurement m;
        m.verdict = e.verdict;
        m.diagnosis = e.diagnosis;
        if (e.stats) {
          m.median_ms = e.stats->median_ms;
          m.p20_ms = e.stats->p20_ms;
          m.p80_ms = e.stats->p80_ms;
          m.min_ms = e.stats->min_ms;
          m.max_ms = e.stats->max_ms;
          m.runs = e.stats->runs;
          m.tflops = e.tflops;
        }
        db::store_measurement(database, key, m);
        measured = m;
      }
      row.default_tflops = measured->verdict == "ok" ? measured->tflops.value_or(0.0) : 0.0;
      rows.push_back(row);
    }
  }
  return rows;
}

std::string render_tuning(std::vector<TuneRow> const& rows) {
  TextTable table(
      {"family", "problem", "best config", "ms", "TFLOP/s", "vs default", "measured", "resumed", "rejected"});
  for (auto const& r : rows)
    table.add_row({r.family, r.problem, r.best_config.empty() ? "(none passed)" : r.best_config,
                   format_fixed(r.best_ms, 3), format_fixed(r.best_tflops, 1),
                   r.default_tflops > 0 ? format_fixed(r.best_tflops / r.default_tflops, 2) + "x" : "-",
                   std::to_string(r.evaluated), std::to_string(r.resumed), std::to_string(r.rejected)});
  return table.render();
}

namespace {
std::string quoted(std::string const& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}
}  // namespace

std::string tuning_json(std::vector<TuneRow> const& rows, runtime::DeviceInfo const& device) {
  std::string out = "{\n  \"gpu\": " + quoted(device.identity()) +
                    ",\n  \"date\": " + quoted(db::utc_timestamp()) + ",\n  \"results\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto const& r = rows[i];
    out += "    {\"family\": " + quoted(r.family) + ", \"problem\": " + quoted(r.problem) +
           ", \"best_config\": " + quoted(r.best_config) + ", \"median_ms\": " + format_fixed(r.best_ms, 5) +
           ", \"tflops\": " + format_fixed(r.best_tflops, 2) +
           ", \"default_config\": " + quoted(r.default_config) +
           ", \"default_tflops\": " + format_fixed(r.default_tflops, 2) +
           ", \"measured\": " + std::to_string(r.evaluated) + ", \"resumed\": " + std::to_string(r.resumed) +
           ", \"rejected\": " + std::to_string(r.rejected) + "}" + (i + 1 < rows.size() ? "," : "") + "\n";
  }
  return out + "  ]\n}\n";
}

}  // namespace fl::tuner
