#include "tuner/tune/tune_loop.hpp"

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

}  // namespace

TuneOutcome tune_problem(Family const& family, Problem const& problem, SearchStrategy& strategy,
                         ParameterSpace const& space, Evaluator& evaluator, TuneStore const& store,
                         TuneLimits const& limits, Progress* progress) {
  TuneOutcome outcome;
  db::MeasurementKey key{store.gpu, store.nvrtc_version, store.source_hash, std::string(family.name()),
                         "",        problem_key(problem)};
  while (!limits.budget || outcome.evaluated + outcome.resumed < *limits.budget) {
    if (limits.deadline && std::chrono::steady_clock::now() >= *limits.deadline) break;
    auto point = strategy.next();
    if (!point) break;
    Config const config = space.config_of(*point);
    key.config = to_string(config);

    db::Measurement row;
    if (auto stored = db::find_measurement(*store.database, key)) {
      row = *stored;
      ++outcome.resumed;
    } else {
      Evaluation evaluation = evaluator.evaluate(config, problem);
      // A candidate much faster than the best so far is measured again; the slower median counts.
      if (evaluation.stats && outcome.best_stats && needs_remeasure(*evaluation.stats, outcome.best_stats)) {
        Evaluation again = evaluator.evaluate(config, problem);
        if (again.stats) {
          double const flops = evaluation.tflops * evaluation.stats->median_ms;
          evaluation.stats = confirm(*evaluation.stats, *again.stats);
          evaluation.tflops = flops / evaluation.stats->median_ms;
          ++outcome.remeasured;
        }
      }
      row = to_row(evaluation);
      db::store_measurement(*store.database, key, row);  // committed before anything else happens
      ++outcome.evaluated;
    }
    auto const cost = cost_of(row);
    strategy.report(*point, cost);
    if (!cost) ++outcome.rejected;
    if (cost && (!outcome.best_stats || *cost < outcome.best_stats->median_ms)) {
      outcome.best = config;
      outcome.best_stats = TimingStats{.median_ms = *row.median_ms,
                                       .p20_ms = row.p20_ms.value_or(*row.median_ms),
                                       .p80_ms = row.p80_ms.value_or(*row.median_ms),
                                       .min_ms = row.min_ms.value_or(*row.median_ms),
                                       .max_ms = row.max_ms.value_or(*row.median_ms),
                                       .runs = row.runs.value_or(0)};
      outcome.best_tflops = row.tflops.value_or(0.0);
      if (progress)
        progress->set_best(key.config + " " + std::to_string(int(outcome.best_tflops)) + " TFLOP/s");
    }
    if (progress) progress->advance();
  }
  if (outcome.best && outcome.best_stats) {
    db::store_best_config(*store.database,
                          db::BestConfig{store.gpu, key.problem, key.family, to_string(*outcome.best),
                                         outcome.best_stats->median_ms, outcome.best_tflops, "measured",
                                         store.nvrtc_version, store.source_hash, ""});
  }
  return outcome;
}

}  // namespace fl::tuner
