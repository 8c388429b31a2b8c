#include "tuner/tune/compile_only.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <map>

#include "common/precision.hpp"
#include "device/compile/compile_config.hpp"
#include "device/families/registry.hpp"
#include "tuner/compile/compile_pool.hpp"
#include "tuner/compile/prune.hpp"
#include "tuner/report/progress.hpp"
#include "tuner/report/table.hpp"

namespace fl::tuner {

std::vector<device::Problem> selected_problem_classes(TuneOptions const& options) {
  std::vector<device::Problem> problems;
  std::vector<bool> causal_values;
  if (options.causal != CausalChoice::yes) causal_values.push_back(false);
  if (options.causal != CausalChoice::no) causal_values.push_back(true);
  std::vector<device::Direction> directions;
  if (options.direction != DirectionChoice::bwd) directions.push_back(device::Direction::forward);
  if (options.direction != DirectionChoice::fwd) directions.push_back(device::Direction::backward);
  for (auto const& dtype_name : options.dtypes)
    for (int d : options.head_dims)
      for (bool causal : causal_values)
        for (device::Direction direction : directions) {
          problems.push_back(device::headline_problem(options.seqlens.front(), d, causal,
                                                      *common::parse_precision(dtype_name), direction));
          problems.back().fp8 = options.fp8;  // ignored by 16-bit dtypes
        }
  return problems;
}

std::vector<std::unique_ptr<device::Family>> selected_families(TuneOptions const& options) {
  if (options.families.empty()) return device::all_families();
  std::vector<std::unique_ptr<device::Family>> families;
  for (auto const& name : options.families) {
    auto family = device::find_family(name);
    if (!family) throw UsageError("--family '" + name + "' is not one of: " + device::family_names());
    families.push_back(std::move(family));
  }
  return families;
}

namespace {

std::string problem_class(device::Problem const& p) {
  return device::dtype_key(p) + " d" + std::to_string(p.shape.head_dim) +
         (p.shape.causal ? " causal " : " full ") + device::direction_name(p.direction);
}

struct PendingConfig {
  CompileOnlyRow row;
  std::vector<device::LaunchStep> launches;
  SpillRule spills = SpillRule::prune;  // allow: the family's default for this problem
  std::shared_future<runtime::Result<device::CompileResult>> compiled;
};

void finish_row(PendingConfig& pending, device::ArchLimits const& limits) {
  auto& row = pending.row;
  auto const& result = pending.compiled.get();
  if (!result) {
    row.reason = result.error().one_line();
    return;
  }
  auto const& compiled = result.value();
  row.compiled = true;
  row.from_cache = compiled.from_cache;
  row.compile_ms = compiled.program.compile_ms;
  for (auto const& kernel : compiled.program.resources.entries()) {
    row.registers = std::max(row.registers, kernel.registers);
    row.spill_bytes = std::max(row.spill_bytes, kernel.spill_store_bytes + kernel.spill_load_bytes);
  }
  for (auto const& launch : pending.launches) {  // each kernel's static bytes with its own launch's dynamic
    auto const* kernel = compiled.program.resources_of(launch.name_expression);
    row.shared_bytes =
        std::max(row.shared_bytes, (kernel ? kernel->shared_bytes : 0) + launch.dynamic_shared_bytes);
  }
  auto const rejected = prune_on_resources(compiled.program, pending.launches, limits, pending.spills);
  row.kept = !rejected;
  row.reason = rejected.value_or("");
}

}  // namespace

CompileOnlyReport run_compile_only(TuneOptions const& options, runtime::TargetArch arch,
                                   std::filesystem::path const& kernels_dir,
                                   std::filesystem::path const& db_path, device::ArchLimits const& limits,
                                   std::function<int()> const& stop) {
  auto const start = std::chrono::steady_clock::now();
  CompilePool pool(options.jobs, db_path);
  device::CompileSpec const spec{.arch = arch, .kernels_dir = kernels_dir, .mutant_switches = {}};
  std::vector<PendingConfig> pending;
  // Identical programs (same cache key) are compiled once even when two problem classes share them.
  std::map<std::string, std::shared_future<runtime::Result<device::CompileResult>>> submitted;

  auto const families = selected_families(options);
  for (auto const& family : families) {
    for (auto const& problem : selected_problem_classes(options)) {
      if (family->unsupported(problem)) continue;
      for (auto const& config : device::enumerate_space(*family, problem)) {
        PendingConfig p;
        p.row.family = std::string(family->name());
        p.row.problem_class = problem_class(problem);
        p.row.config = device::to_string(config);
        if (config == family->default_config(problem)) p.spills = SpillRule::allow;
        p.launches = family->launches(config, problem);
        std::size_t dynamic_shared = 0;  // the largest launch's
        int block_threads = 0;
        for (auto const& launch : p.launches) {
          dynamic_shared = std::max(dynamic_shared, launch.dynamic_shared_bytes);
          block_threads = std::max(block_threads, int(launch.block.x * launch.block.y * launch.block.z));
        }
        if (auto reason = prune_before_compile(dynamic_shared, block_threads, limits)) {
          p.row.reason = "pruned: " + *reason;
          pending.push_back(std::move(p));
          continue;
        }
        auto request = device::make_family_request(*family, config, problem, spec);
        if (!request) {
          p.row.reason = request.error().one_line();
          pending.push_back(std::move(p));
          continue;
        }
        auto [it, fresh] = submitted.try_emplace(runtime::cache_key_material(request.value()).sha256);
        if (fresh) it->second = pool.submit(std::move(request).value()).share();
        p.compiled = it->second;
        pending.push_back(std::move(p));
      }
    }
  }

  CompileOnlyReport report;
  Progress progress("compile", pending.size());
  for (auto& p : pending) {
    if (stop && (report.stop_signal = stop()) != 0) break;
    if (p.compiled.valid()) finish_row(p, limits);
    progress.advance();
    report.rows.push_back(std::move(p.row));
  }
  progress.finish();
  for (auto& [key, future] : submitted) {
    if (report.stop_signal && future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
    auto const& result = future.get();
    if (result) (result->from_cache ? report.cache_hits : report.compiled)++;
  }
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::string render_compile_only(CompileOnlyReport const& report) {
  TextTable table(
      {"family", "problem", "config", "regs", "smem B", "spill B", "compile ms", "cache", "verdict"});
  int kept = 0;
  for (auto const& r : report.rows) {
    table.add_row(
        {r.family, r.problem_class, r.config, r.compiled ? std::to_string(r.registers) : "-",
         r.compiled ? std::to_string(r.shared_bytes) : "-", r.compiled ? std::to_string(r.spill_bytes) : "-",
         r.compiled ? format_fixed(r.compile_ms, 0) : "-", r.compiled ? (r.from_cache ? "hit" : "miss") : "-",
         r.kept ? "kept" : "rejected: " + r.reason});
    kept += r.kept ? 1 : 0;
  }
  return table.render() + std::to_string(report.rows.size()) + " configs: " + std::to_string(kept) +
         " kept, " + std::to_string(report.rows.size() - std::size_t(kept)) + " rejected; " +
         std::to_string(report.compiled) + " programs compiled, " + std::to_string(report.cache_hits) +
         " from the cache; " + format_fixed(report.wall_s, 2) + " s\n";
}

}  // namespace fl::tuner
