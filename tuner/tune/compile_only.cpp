#include "tuner/tune/compile_only.hpp"

#include <chrono>
#include <future>
#include <map>

#include "numerics/precision.hpp"
#include "tuner/compile/compile_pool.hpp"
#include "tuner/compile/prune.hpp"
#include "tuner/report/progress.hpp"
#include "tuner/report/table.hpp"

namespace fl::tuner {

std::vector<ProblemClass> selected_problem_classes(TuneOptions const& options) {
  std::vector<ProblemClass> classes;
  std::vector<bool> causal_values;
  if (options.causal != CausalChoice::yes) causal_values.push_back(false);
  if (options.causal != CausalChoice::no) causal_values.push_back(true);
  std::vector<Pass> passes;
  if (options.direction != Direction::bwd) passes.push_back(Pass::fwd);
  if (options.direction != Direction::fwd) passes.push_back(Pass::bwd);
  for (auto const& dtype_name : options.dtypes)
    for (int d : options.head_dims)
      for (bool causal : causal_values)
        for (Pass pass : passes) classes.push_back({*numerics::parse_precision(dtype_name), d, causal, pass});
  return classes;
}

std::vector<std::shared_ptr<KernelFamily const>> selected_families(TuneOptions const& options) {
  if (options.families.empty()) return all_families();
  std::vector<std::shared_ptr<KernelFamily const>> families;
  for (auto const& name : options.families) {
    auto family = find_family(name);
    if (!family) {
      std::string known;
      for (auto const& f : all_families()) known += (known.empty() ? "" : ", ") + f->name();
      throw UsageError("--family '" + name + "' is not one of: " + known);
    }
    families.push_back(family);
  }
  return families;
}

namespace {

struct PendingConfig {
  CompileOnlyRow row;
  std::size_t dynamic_shared = 0;
  int block_threads = 0;
  std::shared_future<runtime::Result<CompileResult>> compiled;
};

std::string unit_key(CompileUnit const& unit) {
  std::string key = unit.kernels_file;
  for (auto const& [name, value] : unit.defines) key += "|" + name + "=" + value;
  for (auto const& expr : unit.name_expressions) key += "|" + expr;
  return key;
}

void finish_row(PendingConfig& pending, ArchLimits const& limits, CompileOnlyReport& report) {
  auto& row = pending.row;
  auto const& result = pending.compiled.get();
  if (!result) {
    row.reason = result.error().one_line();
    return;
  }
  auto const& compiled = result.value();
  row.from_cache = compiled.from_cache;
  row.compile_ms = compiled.program.compile_ms;
  (compiled.from_cache ? report.cache_hits : report.compiled)++;
  for (auto const& kernel : compiled.program.resources.entries()) {
    row.registers = std::max(row.registers, kernel.registers);
    row.shared_bytes = std::max(row.shared_bytes, kernel.shared_bytes + pending.dynamic_shared);
    row.spill_bytes = std::max(row.spill_bytes, kernel.spill_store_bytes + kernel.spill_load_bytes);
  }
  auto const rejected =
      prune_on_resources(compiled.program, pending.dynamic_shared, pending.block_threads, limits);
  row.kept = !rejected;
  row.reason = rejected.value_or("");
}

}  // namespace

CompileOnlyReport run_compile_only(TuneOptions const& options, runtime::TargetArch arch,
                                   std::filesystem::path const& kernels_dir,
                                   std::filesystem::path const& db_path, ArchLimits const& limits) {
  auto const start = std::chrono::steady_clock::now();
  auto sources = std::make_shared<SourceSet>(kernels_dir);
  CompilePool pool(options.jobs, db_path, sources, arch);
  std::vector<PendingConfig> pending;
  std::map<std::string, std::shared_future<runtime::Result<CompileResult>>> submitted;

  for (auto const& family : selected_families(options)) {
    auto classes = selected_problem_classes(options);
    if (family->problem_independent()) classes.resize(std::min<std::size_t>(classes.size(), 1));
    for (auto const& problem : classes) {
      if (!family->supports(arch, problem)) continue;
      auto const space = family->space(problem);
      for (auto const& point : space.valid_points()) {
        PendingConfig p;
        Config const config = space.config_of(point);
        p.row.family = family->name();
        p.row.problem_class = family->problem_independent() ? "any" : describe(problem);
        p.row.config = to_string(config);
        p.dynamic_shared = family->dynamic_shared_bytes(config, problem);
        p.block_threads = family->block_threads(config, problem);
        if (auto reason = prune_before_compile(p.dynamic_shared, p.block_threads, limits)) {
          p.row.reason = "pruned: " + *reason;
          pending.push_back(std::move(p));
          continue;
        }
        auto const unit = family->compile_unit(config, problem);
        auto [it, fresh] = submitted.try_emplace(unit_key(unit));
        if (fresh) it->second = pool.submit(unit).share();
        p.compiled = it->second;
        pending.push_back(std::move(p));
      }
    }
  }

  CompileOnlyReport report;
  Progress progress("compile", pending.size());
  for (auto& p : pending) {
    if (p.compiled.valid()) finish_row(p, limits, report);
    progress.advance();
    report.rows.push_back(std::move(p.row));
  }
  progress.finish();
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::string render_compile_only(CompileOnlyReport const& report) {
  TextTable table(
      {"family", "problem", "config", "regs", "smem B", "spill B", "compile ms", "cache", "verdict"});
  int kept = 0;
  for (auto const& r : report.rows) {
    bool const compiled = r.registers > 0 || r.from_cache || r.compile_ms > 0.0;
    table.add_row(
        {r.family, r.problem_class, r.config, compiled ? std::to_string(r.registers) : "-",
         compiled ? std::to_string(r.shared_bytes) : "-", compiled ? std::to_string(r.spill_bytes) : "-",
         compiled ? format_fixed(r.compile_ms, 0) : "-", r.from_cache ? "hit" : (compiled ? "miss" : "-"),
         r.kept ? "kept" : "rejected: " + r.reason});
    kept += r.kept ? 1 : 0;
  }
  return table.render() + std::to_string(report.rows.size()) + " configs: " + std::to_string(kept) +
         " kept, " + std::to_string(report.rows.size() - std::size_t(kept)) + " rejected; " +
         std::to_string(report.compiled) + " compiled, " + std::to_string(report.cache_hits) +
         " from the cache; " + format_fixed(report.wall_s, 2) + " s\n";
}

}  // namespace fl::tuner
