#include "tuner/tune/tune_loop.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "tuner/tune/db_rows.hpp"
#include "tuner/tune/stored_rows.hpp"

namespace fl::tuner {

// One tuning run of one problem: the loop's state between candidates.
class ProblemTuning::Run {
 public:
  Run(device::Family const& family, device::Problem problem, SearchStrategy& strategy,
      ParameterSpace const& space, Evaluator& evaluator, TuneStore store, Progress* progress)
      : family_(family),
        problem_(std::move(problem)),
        strategy_(strategy),
        space_(space),
        evaluator_(evaluator),
        store_(std::move(store)),
        progress_(progress),
        space_size_(space.valid_points().size()),
        default_config_(family.default_config(problem_)),
        key_{store_.gpu, store_.nvrtc_version, store_.source_hash, std::string(family.name()),
             "",         problem_key(problem_)} {}

  // Whether another candidate may start; when not, records why in the outcome.
  bool may_continue(TuneLimits const& limits) {
    if (outcome_.context_lost) return stop_because(SearchEnd::context_lost);
    if (limits.stop && limits.stop()) return stop_because(SearchEnd::stopped);
    if (limits.budget && spent() >= *limits.budget) return stop_because(SearchEnd::budget);
    if (limits.deadline && std::chrono::steady_clock::now() >= *limits.deadline)
      return stop_because(SearchEnd::time);
    return true;
  }
  bool stop_because(SearchEnd end) {
    outcome_.end = end;
    return false;
  }
  int spent() const { return outcome_.evaluated + outcome_.resumed; }
  SearchEnd outcome_end() const { return outcome_.end; }

  // Whether the store already answers `config` (asked once per config: only this run adds rows for it).
  bool stored(device::Config const& config, TuneLimits const& limits) {
    if (limits.remeasure_run) return false;
    auto key = key_;
    key.config = device::to_string(config);
    auto [it, inserted] = stored_.try_emplace(key.config, false);
    if (inserted) {
      auto const found = db::find_measurement(*store_.database, key);
      it->second = found && !measure_again(config, *found, default_config_);
    }
    return it->second;
  }

  bool complete(TuneLimits const& limits) {
    if (limits.remeasure_run) return false;  // every config is measured again
    if (!complete_) {                        // once complete, always: this run only adds rows
      auto const points = space_.valid_points();
      complete_ =
          std::ranges::all_of(points, [&](PointIndex p) { return stored(space_.config_of(p), limits); });
    }
    return complete_;
  }

  // Every measurement the store holds for this problem, answered before anything else (stored_rows.hpp): the
  // strategy hears each, none is measured again, and spent() counts them. Once per run; never in a
  // --noise-runs repeat, which measures run 1's candidates again.
  int resume(TuneLimits const& limits) {
    if (resumed_from_store_ || limits.remeasure_run) return 0;
    resumed_from_store_ = true;
    auto const rows = stored_rows(*store_.database, key_, space_, default_config_);
    for (auto const& row : rows) {
      key_.config = row.text;
      stored_[key_.config] = true;
      cost_ = {};
      auto const cost = answered_from_store(row.measurement);
      answered_[row.point] = cost;
      strategy_.report(row.point, cost);
    }
    return int(rows.size());
  }

  bool answered(device::Config const& config) const {
    auto const point = space_.point_of(config);
    return point && answered_.contains(*point);
  }

  void evaluate_first(TuneLimits const& limits) {
    resume(limits);
    std::vector<std::pair<device::Config, std::optional<PointIndex>>> first;
    for (auto const& config : limits.first) first.emplace_back(config, space_.point_of(config));
    for (std::size_t i = 0; i < first.size() && may_continue(limits); ++i) {
      auto const& [config, point] = first[i];
      if (point && answered_.contains(*point)) continue;
      for (std::size_t j = i + 1; j < first.size() && j <= i + limits.lookahead; ++j)
        if (!stored(first[j].first, limits)) evaluator_.prefetch(first[j].first, problem_);
      // The strategy's first proposals too (exhaustive, random and bayes know them before any report).
      prefetch_upcoming(limits);
      auto const cost = answer(config, limits);
      if (point) {
        answered_[*point] = cost;
        strategy_.report(*point, cost);
      }
    }
  }

  void search(TuneLimits const& limits) {
    resume(limits);
    while (may_continue(limits)) {
      auto point = strategy_.next();
      if (!point) {
        outcome_.end = SearchEnd::exhausted;
        break;
      }
      if (auto it = answered_.find(*point); it != answered_.end()) {
        strategy_.report(*point, it->second);
        continue;
      }
      prefetch_upcoming(limits);
      auto const cost = answer(space_.config_of(*point), limits);
      answered_[*point] = cost;
      strategy_.report(*point, cost);
    }
  }

  TuneOutcome finish(TuneLimits const& limits) {
    if (outcome_.best_row && !limits.remeasure_run) {
      db::store_best_config(*store_.database,
                            db::BestConfig{store_.gpu, problem_key(problem_), std::string(family_.name()),
                                           outcome_.best_config_text(), outcome_.best_median_ms(),
                                           outcome_.best_tflops(), "measured", store_.nvrtc_version,
                                           store_.source_hash, outcome_.best_measurement().measured_at});
    }
    outcome_.wall_s = wall_s_;
    return std::move(outcome_);
  }

  // Wall time is summed over the steps, so that the time between them (other problems' steps) is not
  // counted against this problem.
  template <typename Step>
  void timed(Step&& step) {
    auto const begin = std::chrono::steady_clock::now();
    step();
    wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }

 private:
  void prefetch_upcoming(TuneLimits const& limits) {
    if (limits.lookahead == 0) return;
    for (auto const& ahead : strategy_.upcoming(limits.lookahead)) {
      auto const config = space_.config_of(ahead);
      if (!answered_.contains(ahead) && !stored(config, limits)) evaluator_.prefetch(config, problem_);
    }
  }

  // The cost of `config` (nullopt: rejected): from the store, or measured now and committed at once.
  std::optional<double> answer(device::Config const& config, TuneLimits const& limits) {
    key_.config = device::to_string(config);
    std::optional<db::Measurement> found;
    if (!limits.remeasure_run) found = db::find_measurement(*store_.database, key_);
    if (found && measure_again(config, *found, default_config_)) found.reset();
    cost_ = {};
    std::optional<double> cost;
    if (found) {
      cost = answered_from_store(*found);
    } else {
      auto const row = measure(config, limits);
      if (limits.remeasure_run)
        db::store_remeasurement(*store_.database, key_, *limits.remeasure_run, row);
      else
        db::store_measurement(*store_.database, key_, row);  // committed before anything else happens
      ++outcome_.evaluated;
      cost = counted(row);
    }
    stored_[key_.config] = true;
    if (progress_) {
      if (!progress_prefix_.empty())
        progress_->set_label(progress_prefix_ + ": candidate " + std::to_string(spent()) + "/" +
                             std::to_string(space_size_) + ", run");
      // This problem's best, never the last best of another: fa-tune measures every problem's default
      // before any searches, so the line moves between problems.
      progress_->set_best(outcome_.best_row ? outcome_.best_config_text() + " " +
                                                  std::to_string(int(outcome_.best_tflops())) + " TFLOP/s"
                                            : "");
      progress_->advance();
    }
    return cost;
  }

  std::optional<double> answered_from_store(db::Measurement const& row) {
    ++outcome_.resumed;
    return counted(row);
  }

  // `row`, the answer for the config key_.config (cost_: where its time went), in the outcome.
  std::optional<double> counted(db::Measurement const& row) {
    return count_answer(outcome_, key_.config, row, cost_);
  }

  Evaluation evaluate(device::Config const& config) {
    // A noise repeat compares every candidate's full measurement with run 1's: nothing is cut there.
    evaluator_.hear_best(outcome_.best_row && !remeasuring_ ? outcome_.best_measurement().median_ms
                                                            : std::nullopt);
    Evaluation e = evaluator_.evaluate(config, problem_);
    if (e.timing_cut) ++outcome_.timing_cut;
    cost_.compile_wait_ms += e.compile_wait_ms;
    cost_.compile_ms += e.compile_ms;
    cost_.verify_ms += e.verify_ms;
    cost_.timing_ms += e.timing_ms;
    outcome_.compile_wait_s += e.compile_wait_ms * 1e-3;
    outcome_.compile_cpu_s += e.compile_ms * 1e-3;
    outcome_.verify_s += e.verify_ms * 1e-3;
    outcome_.verify_sets_s += e.verify_sets_ms * 1e-3;
    outcome_.verify_small_s += e.verify_small_ms * 1e-3;
    outcome_.verify_timed_run_s += e.verify_timed_run_ms * 1e-3;
    outcome_.timing_s += e.timing_ms * 1e-3;
    if (e.context_lost) {
      // The culprit is stored as failed either way; the run goes on only if the GPU is usable again.
      std::string const culprit = key_.config + ": " + e.diagnosis;
      if (evaluator_.recover())
        outcome_.faults.push_back(culprit);
      else
        outcome_.context_lost = culprit;
    }
    return e;
  }

  db::Measurement measure(device::Config const& config, TuneLimits const& limits) {
    remeasuring_ = limits.remeasure_run.has_value();
    Evaluation evaluation = evaluate(config);
    // A candidate much faster than the best so far is measured again; the slower median counts.
    if (!evaluation.context_lost && evaluation.stats &&
        needs_remeasure(*evaluation.stats, outcome_.best_stats())) {
      Evaluation again = evaluate(config);
      if (again.stats) {
        double const flops = evaluation.tflops * evaluation.stats->median_ms;
        evaluation.stats = confirm(*evaluation.stats, *again.stats);
        evaluation.tflops = flops / evaluation.stats->median_ms;
        ++outcome_.remeasured;
      }
    }
    auto row = measurement_of(evaluation);
    row.run_id = limits.remeasure_run ? limits.remeasure_run : limits.run_id;
    return row;
  }

  device::Family const& family_;
  device::Problem problem_;
  SearchStrategy& strategy_;
  ParameterSpace const& space_;
  Evaluator& evaluator_;
  TuneStore store_;
  Progress* progress_;
  std::size_t space_size_;
  device::Config default_config_;  // asked of each stored row (measure_again): built once, not per lookup

 public:
  std::string progress_prefix_;

 private:
  double wall_s_ = 0.0;
  bool remeasuring_ = false;  // the candidate being measured belongs to a --noise-runs repeat
  db::MeasurementKey key_;
  TuneOutcome outcome_;
  CandidateCost cost_;  // of the candidate being answered
  std::map<std::string, bool> stored_;
  bool complete_ = false;            // complete(): every point of the space stored
  bool resumed_from_store_ = false;  // resume() done
  // Costs of the points answered here: a point the strategy proposes again (exhaustive and random reach the
  // first configs in their own order) is reported again, not evaluated or counted twice.
  std::map<PointIndex, std::optional<double>> answered_;
};

ProblemTuning::ProblemTuning(device::Family const& family, device::Problem problem, SearchStrategy& strategy,
                             ParameterSpace const& space, Evaluator& evaluator, TuneStore store,
                             Progress* progress)
    : run_(std::make_unique<Run>(family, std::move(problem), strategy, space, evaluator, std::move(store),
                                 progress)) {}
ProblemTuning::~ProblemTuning() = default;

void ProblemTuning::set_progress_prefix(std::string prefix) {
  run_->progress_prefix_ = std::move(prefix);
}

void ProblemTuning::evaluate_first(TuneLimits const& limits) {
  run_->timed([&] { run_->evaluate_first(limits); });
}
void ProblemTuning::search(TuneLimits const& limits) {
  run_->timed([&] { run_->search(limits); });
}
int ProblemTuning::resume(TuneLimits const& limits) {
  return run_->resume(limits);
}
bool ProblemTuning::answered(device::Config const& config) const {
  return run_->answered(config);
}
bool ProblemTuning::complete(TuneLimits const& limits) {
  return run_->complete(limits);
}
int ProblemTuning::spent() const {
  return run_->spent();
}
SearchEnd ProblemTuning::end() const {
  return run_->outcome_end();
}
TuneOutcome ProblemTuning::finish(TuneLimits const& limits) {
  return run_->finish(limits);
}

TuneOutcome tune_problem(device::Family const& family, device::Problem const& problem,
                         SearchStrategy& strategy, ParameterSpace const& space, Evaluator& evaluator,
                         TuneStore const& store, TuneLimits const& limits, Progress* progress) {
  ProblemTuning tuning(family, problem, strategy, space, evaluator, store, progress);
  tuning.evaluate_first(limits);
  tuning.search(limits);
  return tuning.finish(limits);
}

}  // namespace fl::tuner
