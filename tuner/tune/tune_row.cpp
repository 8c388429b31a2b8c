// A problem's row of fa-tune's report from its tuning outcome (tune_row, tune_command.hpp).
#include "tuner/tune/tune_command.hpp"

namespace fl::tuner {

TuneRow tune_row(std::string family, device::Problem const& problem, std::size_t space_size,
                 device::Config const& default_config, TuneOutcome&& outcome) {
  TuneRow row;
  row.family = std::move(family);
  row.problem = device::describe(problem);
  row.problem_spec = problem;
  row.evaluated = outcome.evaluated;
  row.resumed = outcome.resumed;
  row.rejected = outcome.rejected;
  row.space_size = space_size;
  row.end = outcome.evaluated + outcome.resumed == 0 ? SearchEnd::not_reached : outcome.end;
  // Its default was measured, then the run lost the GPU before this problem's search could start.
  if (row.end == SearchEnd::not_reached && outcome.evaluated + outcome.resumed > 0)
    row.end = SearchEnd::context_lost;
  row.faults = outcome.faults;
  row.wall_s = outcome.wall_s;
  row.compile_wait_s = outcome.compile_wait_s;
  row.verify_s = outcome.verify_s;
  row.verify_sets_s = outcome.verify_sets_s;
  row.verify_small_s = outcome.verify_small_s;
  row.verify_timed_run_s = outcome.verify_timed_run_s;
  row.timing_s = outcome.timing_s;
  row.compile_cpu_s = outcome.compile_cpu_s;
  row.timing_cut = outcome.timing_cut;
  if (outcome.best_row) {
    row.best_config = outcome.best_config_text();
    row.best_ms = outcome.best_median_ms();
    row.best_tflops = outcome.best_tflops();
  }
  row.default_config = device::to_string(default_config);
  row.default_verdict = row.end == SearchEnd::not_reached ? "not reached" : "not measured";
  for (auto const& [config, m] : outcome.rows)
    if (config == row.default_config) {
      row.default_verdict = m.verdict;
      row.default_diagnosis = m.diagnosis;
      if (m.verdict == "ok") row.default_tflops = m.tflops.value_or(0.0);
    }
  row.candidates = std::move(outcome.rows);
  row.costs = std::move(outcome.costs);
  return row;
}

}  // namespace fl::tuner
