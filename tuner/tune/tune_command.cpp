#include "tuner/tune/tune_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <span>

#include "common/precision.hpp"
#include "db/schema.hpp"
#include "db/seed_configs.hpp"
#include "db/tuning_runs.hpp"
#include "device/families/registry.hpp"
#include "tuner/report/table.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/tune/budget_split.hpp"
#include "tuner/tune/compile_only.hpp"
#include "tuner/tune/cross_check.hpp"
#include "tuner/tune/nearest_tuned.hpp"
#include "tuner/tune/shard.hpp"
#include "tuner/tune/source_hash.hpp"

namespace fl::tuner {

namespace {
// Candidates compiled ahead per compile worker. Exhaustive and random know their order: one compile in flight
// and one queued per worker keeps every worker busy while the GPU thread takes them one by one. Annealing and
// bayes only guess (neighbours, best expected improvement): one per worker, so guesses never queue in front
// of the proposal the GPU thread waits for (that one is submitted urgent, to the front of the queue).
constexpr std::size_t kExactLookaheadPerWorker = 2;
constexpr std::size_t kGuessLookaheadPerWorker = 1;

// --warm-start: at most this many configs tuned at other shapes go first. Along n the headline grid has 4
// other n per class; more would spend a small budget on configs the nearest ones already stand for.
constexpr std::size_t kWarmStartConfigs = 4;

// One (family, problem) pair of the run and its tuning state, alive from its default to its search.
struct Unit {
  std::unique_ptr<device::Family> family;
  device::Problem problem;
  std::size_t problem_index = 0;
  std::unique_ptr<ParameterSpace> space;
  std::unique_ptr<SearchStrategy> strategy;
  std::unique_ptr<ProblemTuning> tuning;
  device::Config fallback;
  int stored = 0;  // measurements it resumed from the database (ProblemTuning::resume)
};

using Clock = std::chrono::steady_clock;

// Now + an even share of the time left until `deadline` over `units` units (the deadline itself for 1).
std::optional<Clock::time_point> share_of(std::optional<Clock::time_point> deadline, std::size_t units) {
  if (!deadline) return std::nullopt;
  auto const now = Clock::now();
  if (now >= *deadline || units <= 1) return deadline;
  return now + (*deadline - now) / static_cast<long>(units);
}

std::string split_note(TuneOptions const& options, std::size_t units) {
  std::string note;
  auto const n = std::to_string(units);
  if (options.budget)
    note += "--budget " + std::to_string(*options.budget) + " evaluations in all, split over " + n +
            " problems (about " +
            std::to_string((*options.budget + int(units) - 1) / std::max(1, int(units))) +
            " each, counting the evaluations stored for it; what a problem cannot use passes to the others)";
  if (options.time_limit_s)
    note += std::string(note.empty() ? "" : "; ") + "--time-limit " + format_fixed(*options.time_limit_s, 0) +
            " s in all, split over " + n +
            " problems (each gets the time left divided by the problems left; time left at the end goes back "
            "to the problems whose share ran out)";
  if (!note.empty()) note += "; every problem's default is measured first, before any problem searches";
  return note;
}

}  // namespace

TuningReport run_tuning(TuneOptions const& options, TuningBackend& backend,
                        std::filesystem::path const& kernels_dir, std::filesystem::path const& db_path,
                        std::function<int()> const& stop) {
  auto database = db::open_database(db_path);
  TuningReport report;
  report.gpu = backend.gpu();
  report.nvrtc_version = backend.nvrtc_version();
  report.compile_workers = backend.compile_workers();
  report.strategy = options.strategy;
  auto const kind = *parse_strategy(options.strategy);
  bool const exact_order = kind == StrategyKind::exhaustive || kind == StrategyKind::random;
  std::size_t const lookahead = (exact_order ? kExactLookaheadPerWorker : kGuessLookaheadPerWorker) *
                                std::size_t(std::max(0, backend.compile_workers()));
  std::optional<Clock::time_point> deadline;
  if (options.time_limit_s)
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(*options.time_limit_s));
  auto const stopped = [&] {
    if (stop && report.stop_signal == 0) report.stop_signal = stop();
    return report.stop_signal != 0;
  };

  std::optional<int> budget = options.budget;  // this worker's part of it under --gpus
  auto const shard = options.shard
                         ? std::optional<Shard>(Shard{options.shard->first - 1, options.shard->second})
                         : std::nullopt;
  for (int run = 1; run <= options.noise_runs && !report.context_lost && !stopped(); ++run) {
    auto const run_id = db::begin_tuning_run(
        database, options.command_line,
        run == 1 ? std::nullopt : std::optional<std::int64_t>(report.run_ids.front()), run);
    report.run_ids.push_back(run_id);
    TuneLimits base;
    base.run_id = run_id;
    if (run > 1) base.remeasure_run = run_id;
    base.lookahead = lookahead;
    base.stop = stopped;

    // One progress line for the whole run: problem i of N, candidate j of M, done/planned and the ETA of
    // the run (planned: every unit's space, at most the budget).
    Progress progress(run > 1 ? "run " + std::to_string(run) : "fa-tune", 0);
    progress.set_deadline(deadline);
    // Problem-major: every family of problem 1, then of problem 2, ... (the order of the table).
    std::vector<Unit> units;
    auto const problems = selected_problems(options);
    auto pairs = run_pairs(options, [&](device::Family const& f, device::Problem const& p) {
      return backend.can_measure(f, p);
    });
    // A --gpus worker takes its share of the pairs, or of every pair's candidates (tune/shard.hpp).
    auto const mode = shard_mode(shard, pairs.size(), exact_order);
    std::size_t taken = 0;
    for (std::size_t i = 0; i < pairs.size(); ++i) taken += mode != ShardMode::pairs || takes_pair(*shard, i);
    budget = worker_budget(options.budget, mode, shard.value_or(Shard{}), pairs.size(), taken);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (mode == ShardMode::pairs && !takes_pair(*shard, i)) continue;
      auto const p = pairs[i].problem_index;
      auto family = std::move(pairs[i].family);
      {
        auto hash = family_source_hash(*family, problems[p], kernels_dir);
        if (!hash) throw std::runtime_error(hash.error().one_line());
        Unit unit;
        unit.problem = problems[p];
        unit.problem_index = p;
        unit.space = std::make_unique<ParameterSpace>(family_space(*family, problems[p]));
        if (mode == ShardMode::candidates)
          unit.space = std::make_unique<ParameterSpace>(candidates_of(*unit.space, *shard));
        unit.strategy = make_strategy(kind, *unit.space, options.seed);
        unit.fallback = family->default_config(problems[p]);
        TuneStore const store{&database, report.gpu, report.nvrtc_version, hash.value()};
        unit.tuning = std::make_unique<ProblemTuning>(*family, problems[p], *unit.strategy, *unit.space,
                                                      backend.evaluator_for(*family), store, &progress);
        unit.family = std::move(family);
        units.push_back(std::move(unit));
      }
    }
    if (run == 1) report.split_note = split_note(options, units.size());
    std::size_t planned = 0;
    for (std::size_t k = 0; k < units.size(); ++k) {
      planned += units[k].space->valid_points().size();
      units[k].tuning->set_progress_prefix(
          "problem " + std::to_string(k + 1) + "/" + std::to_string(units.size()) + " " +
          std::string(units[k].family->name()) + " " + device::describe(units[k].problem));
    }
    if (budget) planned = std::min(planned, std::size_t(*budget));
    // A noise repeat measures run 1's candidates of each problem again, in run 1's order, and nothing else:
    // run 1 started from the rows stored before it, which a replay of the strategy would not propose.
    std::vector<std::vector<device::Config>> again(run > 1 ? units.size() : 0);
    for (std::size_t k = 0; k < again.size() && k < report.rows.size(); ++k)
      again[k] = configs_of(report.rows[k].candidates);
    if (run > 1) planned = 0;
    for (auto const& configs : again) planned += configs.size();
    // Every problem starts from the rows the database holds for it, all before anything is measured, so that
    // the budget left below counts them from the first problem on (none in a noise repeat).
    std::size_t stored = 0;
    for (auto& unit : units) stored += std::size_t(unit.stored = unit.tuning->resume(base));
    progress.set_total(std::max(planned, stored));
    if (stored > 0) progress.advance(stored);
    auto const spent = [&] {
      int total = 0;
      for (auto const& u : units) total += u.tuning->spent();
      return total;
    };
    auto const budget_left = [&]() -> std::optional<int> {
      if (!budget) return std::nullopt;
      return std::max(0, *budget - spent());
    };

    // The defaults pass measures a problem's default while the budget lasts, and past it for a problem
    // resumed from the database: its rows may have spent the budget while its default (a new one, since the
    // family's default changed) was never measured, and each problem is reported against its default. A
    // stored default is answered already and costs nothing.
    auto const default_budget = [&](Unit const& unit) {
      auto const left = budget_left();
      return unit.tuning->spent() + (left.value_or(1) > 0 || unit.stored > 0 ? 1 : 0);
    };
    // Whether a problem may still measure anything: not when its whole space is stored, nor when the
    // selection's budget is spent (the rows resumed count), except a resumed problem's default above; in a
    // noise repeat, whether run 1 had candidates there.
    auto const measures_more = [&](std::size_t j, bool defaults_pass) {
      auto const& unit = units[j];
      if (run > 1) return !again[j].empty();
      if (unit.tuning->complete(base)) return false;
      if (budget_left().value_or(1) > 0) return true;
      return defaults_pass && unit.stored > 0 && unit.space->point_of(unit.fallback) &&
             !unit.tuning->answered(unit.fallback);
    };
    // The next problem's verification is started while this one runs (Evaluator::prepare: a backward
    // problem's float64 forward or a forward problem's set, at the lowest CPU priority), passing over
    // problems that will measure nothing: none of theirs is verified (on 2026-12-03 one whose whole space was
    // stored held the cache's only forward computed ahead for the rest of a line, whose 11 forwards were then
    // all computed in place).
    auto const prepare_after = [&](std::size_t k, bool defaults_pass) {
      for (std::size_t j = k + 1; j < units.size(); ++j)
        if (measures_more(j, defaults_pass)) {
          backend.evaluator_for(*units[j].family).prepare(units[j].problem);
          return;
        }
    };
    // --warm-start's rows besides this database's (tune/nearest_tuned.hpp, with_seeds).
    auto const shipped_seeds = options.warm_start ? db::parse_seed_configs(db::shipped_seed_configs())
                                                  : std::vector<db::BestConfig>{};
    // Every problem's default first: a small budget or time limit still gives each its baseline.
    for (std::size_t k = 0; k < units.size(); ++k) {
      auto& unit = units[k];
      prepare_after(k, true);
      TuneLimits limits = base;
      limits.deadline = deadline;
      // A worker with the candidates split measures the default only when it is one of its own.
      if (mode != ShardMode::candidates || unit.space->point_of(unit.fallback))
        limits.first = {unit.fallback};
      limits.budget = run > 1 ? unit.tuning->spent() + int(std::ranges::count(again[k], unit.fallback))
                              : default_budget(unit);
      unit.tuning->evaluate_first(limits);
      if (unit.tuning->end() == SearchEnd::context_lost) break;
    }
    // Then each problem's search under its share of what is left. A problem whose share ran out waits
    // for the time the problems after it leave unspent (below); the others are finished at once, so that
    // their best configs are stored as soon as they are known.
    std::vector<std::optional<TuneOutcome>> outcomes(units.size());
    auto const finish = [&](std::size_t k, TuneLimits const& limits) {
      outcomes[k] = units[k].tuning->finish(limits);
      if (outcomes[k]->context_lost && !report.context_lost) report.context_lost = outcomes[k]->context_lost;
    };
    // A problem's share of what is left among `left_units` (itself first): the time divided by the problems
    // left, and the evaluations levelled over them counting what each has spent (tune/budget_split.hpp), so
    // that a problem resumed with many rows leaves new evaluations to the ones with few.
    auto const share_limits = [&](std::span<std::size_t const> left_units) {
      TuneLimits limits = base;
      limits.deadline = share_of(deadline, left_units.size());
      if (auto const left = budget_left()) {
        std::vector<BudgetClaim> claims;
        for (auto j : left_units)
          claims.push_back({units[j].tuning->spent(), int(units[j].space->valid_points().size())});
        limits.budget = budget_share(claims, *left);
      }
      return limits;
    };
    std::vector<std::size_t> in_order(units.size());
    for (std::size_t k = 0; k < units.size(); ++k) in_order[k] = k;
    std::vector<std::size_t> cut;  // by their time share, in order
    for (std::size_t k = 0; k < units.size(); ++k) {
      auto& unit = units[k];
      TuneLimits limits = share_limits(std::span(in_order).subspan(k));
      if (run > 1) {
        limits.first = again[k];
        limits.budget = int(again[k].size());
      } else if (options.warm_start)
        for (auto const& c : warm_start_configs(
                 *unit.family, unit.problem,
                 with_seeds(db::best_configs(database, report.gpu.name), shipped_seeds, report.gpu.name),
                 kWarmStartConfigs))
          if (c != unit.fallback) limits.first.push_back(c);
      if (!report.context_lost) {
        prepare_after(k, false);
        unit.tuning->evaluate_first(limits);
        unit.tuning->search(limits);
      }
      // A repeat's search would go past run 1's candidates: what its time share cut stays cut.
      if (unit.tuning->end() == SearchEnd::time && !report.context_lost && run == 1)
        cut.push_back(k);
      else
        finish(k, limits);
    }
    // The time later problems left unspent goes back to the problems their shares cut, split over them in
    // order: a problem cut here would start again in the next run and pay its reference again (a backward
    // problem's float64 forward: 7-41 s on the H200, experiments/tuner/README.md). A problem finished before
    // its deadline passes its time on, as above; one cut again stays cut.
    for (std::size_t i = 0; i < cut.size(); ++i) {
      auto& unit = units[cut[i]];
      TuneLimits limits = base;
      if (deadline && Clock::now() < *deadline && !report.context_lost && !stopped()) {
        limits = share_limits(std::span(cut).subspan(i));
        unit.tuning->search(limits);
      }
      finish(cut[i], limits);
    }
    for (std::size_t k = 0; k < units.size(); ++k) {
      auto outcome = std::move(*outcomes[k]);
      if (run > 1) {
        if (k < report.rows.size()) {
          auto comparison = compare_runs(report.rows[k].candidates, outcome.rows, run);
          comparison.wall_s = outcome.wall_s;
          comparison.compile_wait_s = outcome.compile_wait_s;
          comparison.verify_s = outcome.verify_s;
          comparison.timing_s = outcome.timing_s;
          comparison.compile_cpu_s = outcome.compile_cpu_s;
          report.rows[k].noise.push_back(std::move(comparison));
        }
        continue;
      }
      report.rows.push_back(tune_row(std::string(units[k].family->name()), units[k].problem,
                                     units[k].space->valid_points().size(), units[k].fallback,
                                     std::move(outcome)));
    }
    progress.finish();
  }
  // A --gpus worker times the run's reference once more, for the coordinator's cross-check of the GPUs.
  if (shard && shard->count > 1 && !report.context_lost && !stopped() && !report.run_ids.empty())
    time_reference(options, backend, database, kernels_dir, report.run_ids.front());
  report.winners = winners_of(report.rows);
  report.reference_s = backend.reference_seconds();
  report.forwards = backend.forward_sources();
  return report;
}

}  // namespace fl::tuner
