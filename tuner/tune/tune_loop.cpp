#include "tuner/tune/tune_loop.hpp"

#include <map>

#include "numerics/precision.hpp"

namespace fl::tuner {

db::ProblemKey problem_key(Problem const& problem) {
  auto const& s = problem.shape;
  return {s.batch,
          s.heads_q,
          s.heads_kv,
          s.seqlen_q,
          s.seqlen_k,
          s.head_dim,
          std::string(numerics::name(problem.dtype)),
          s.causal,
          direction_name(problem.direction)};
}

namespace {

db::Measurement to_row(Evaluation const& e) {
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
  m.clock_mhz = e.clock_mhz;
  m.temperature_c = e.temperature_c;
  m.compile_cache_key = e.compile_cache_key;
  return m;
}

std::optional<double> cost_of(db::Measurement const& m) {
  if (m.verdict != "ok" || !m.median_ms) return std::nullopt;
  return m.median_ms;
}

// One tuning run of one problem: the loop's state between candidates.
class Run {
 public:
  Run(Family const& family, Problem const& problem, Evaluator& evaluator, TuneStore const& store,
      TuneLimits const& limits, Progress* progress)
      : problem_(problem),
        evaluator_(evaluator),
        store_(store),
        limits_(limits),
        progress_(progress),
        key_{store.gpu, store.nvrtc_version, store.source_hash, std::string(family.name()),
             "",        problem_key(problem)} {}

  bool may_continue() const {
    if (outcome_.context_lost) return false;
    if (limits_.budget && outcome_.evaluated + outcome_.resumed >= *limits_.budget) return false;
    return !limits_.deadline || std::chrono::steady_clock::now() < *limits_.deadline;
  }

  // Whether the store already answers `config` (asked once per config: only this run adds rows for it).
  bool stored(Config const& config) {
    if (limits_.remeasure_run) return false;
    auto key = key_;
    key.config = to_string(config);
    auto [it, inserted] = stored_.try_emplace(key.config, false);
    if (inserted) it->second = db::find_measurement(*store_.database, key).has_value();
    return it->second;
  }

  // The cost of `config` (nullopt: rejected): from the store, or measured now and committed at once.
  std::optional<double> answer(Config const& config) {
    key_.config = to_string(config);
    db::Measurement row;
    std::optional<db::Measurement> found;
    if (!limits_.remeasure_run) found = db::find_measurement(*store_.database, key_);
    if (found) {
      row = *found;
      ++outcome_.resumed;
    } else {
      row = measure(config);
      if (limits_.remeasure_run)
        db::store_remeasurement(*store_.database, key_, *limits_.remeasure_run, row);
      else
        db::store_measurement(*store_.database, key_, row);  // committed before anything else happens
      ++outcome_.evaluated;
    }
    outcome_.rows.emplace_back(key_.config, row);
    auto const cost = cost_of(row);
    if (!cost) ++outcome_.rejected;
    if (cost && (!outcome_.best_stats || *cost < outcome_.best_stats->median_ms)) {
      outcome_.best = config;
      outcome_.best_stats = TimingStats{.median_ms = *row.median_ms,
                                        .p20_ms = row.p20_ms.value_or(*row.median_ms),
                                        .p80_ms = row.p80_ms.value_or(*row.median_ms),
                                        .min_ms = row.min_ms.value_or(*row.median_ms),
                                        .max_ms = row.max_ms.value_or(*row.median_ms),
                                        .runs = row.runs.value_or(0)};
      outcome_.best_tflops = row.tflops.value_or(0.0);
      if (progress_)
        progress_->set_best(key_.config + " " + std::to_string(int(outcome_.best_tflops)) + " TFLOP/s");
    }
    if (progress_) progress_->advance();
    return cost;
  }

  TuneOutcome& outcome() { return outcome_; }

 private:
  Evaluation evaluate(Config const& config) {
    Evaluation e = evaluator_.evaluate(config, problem_);
    outcome_.compile_wait_s += e.compile_wait_ms * 1e-3;
    outcome_.compile_cpu_s += e.compile_ms * 1e-3;
    outcome_.verify_s += e.verify_ms * 1e-3;
    outcome_.timing_s += e.timing_ms * 1e-3;
    if (e.context_lost) outcome_.context_lost = key_.config + ": " + e.diagnosis;
    return e;
  }

  db::Measurement measure(Config const& config) {
    Evaluation evaluation = evaluate(config);
    // A candidate much faster than the best so far is measured again; the slower median counts.
    if (evaluation.stats && outcome_.best_stats && needs_remeasure(*evaluation.stats, outcome_.best_stats)) {
      Evaluation again = evaluate(config);
      if (again.stats) {
        double const flops = evaluation.tflops * evaluation.stats->median_ms;
        evaluation.stats = confirm(*evaluation.stats, *again.stats);
        evaluation.tflops = flops / evaluation.stats->median_ms;
        ++outcome_.remeasured;
      }
    }
    auto row = to_row(evaluation);
    row.run_id = limits_.remeasure_run ? limits_.remeasure_run : limits_.run_id;
    return row;
  }

  Problem const& problem_;
  Evaluator& evaluator_;
  TuneStore const& store_;
  TuneLimits const& limits_;
  Progress* progress_;
  db::MeasurementKey key_;
  TuneOutcome outcome_;
  std::map<std::string, bool> stored_;
};

}  // namespace

TuneOutcome tune_problem(Family const& family, Problem const& problem, SearchStrategy& strategy,
                         ParameterSpace const& space, Evaluator& evaluator, TuneStore const& store,
                         TuneLimits const& limits, Progress* progress) {
  auto const started = std::chrono::steady_clock::now();
  Run run(family, problem, evaluator, store, limits, progress);
  // Costs of the points answered in this call: a point the strategy proposes again (exhaustive and random
  // reach the first configs in their own order) is reported again, not evaluated or counted twice.
  std::map<PointIndex, std::optional<double>> answered;
  std::vector<std::pair<Config, std::optional<PointIndex>>> first;
  for (auto const& config : limits.first) first.emplace_back(config, space.point_of(config));
  for (std::size_t i = 0; i < first.size() && run.may_continue(); ++i) {
    auto const& [config, point] = first[i];
    if (point && answered.contains(*point)) continue;
    for (std::size_t j = i + 1; j < first.size() && j <= i + limits.lookahead; ++j)
      if (!run.stored(first[j].first)) evaluator.prefetch(first[j].first, problem);
    // The strategy's first proposals too (exhaustive, random and bayes know them before any report).
    if (limits.lookahead > 0)
      for (auto const& ahead : strategy.upcoming(limits.lookahead))
        if (!run.stored(space.config_of(ahead))) evaluator.prefetch(space.config_of(ahead), problem);
    auto const cost = run.answer(config);
    if (point) {
      answered[*point] = cost;
      strategy.report(*point, cost);
    }
  }
  while (run.may_continue()) {
    auto point = strategy.next();
    if (!point) break;
    if (auto it = answered.find(*point); it != answered.end()) {
      strategy.report(*point, it->second);
      continue;
    }
    if (limits.lookahead > 0)
      for (auto const& ahead : strategy.upcoming(limits.lookahead)) {
        auto const config = space.config_of(ahead);
        if (!answered.contains(ahead) && !run.stored(config)) evaluator.prefetch(config, problem);
      }
    auto const cost = run.answer(space.config_of(*point));
    answered[*point] = cost;
    strategy.report(*point, cost);
  }
  auto& outcome = run.outcome();
  if (outcome.best && outcome.best_stats && !limits.remeasure_run) {
    db::store_best_config(
        *store.database,
        db::BestConfig{store.gpu, problem_key(problem), std::string(family.name()), to_string(*outcome.best),
                       outcome.best_stats->median_ms, outcome.best_tflops, "measured", store.nvrtc_version,
                       store.source_hash, ""});
  }
  outcome.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return std::move(outcome);
}

}  // namespace fl::tuner
