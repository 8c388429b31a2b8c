#include "tuner/tune/tune_outcome.hpp"

namespace fl::tuner {

namespace {

std::optional<double> cost_of(db::Measurement const& m) {
  if (m.verdict != "ok" || !m.median_ms) return std::nullopt;
  return m.median_ms;
}

}  // namespace

std::string_view name(SearchEnd end) {
  switch (end) {
    case SearchEnd::not_reached:
      return "not reached";
    case SearchEnd::exhausted:
      return "space done";
    case SearchEnd::budget:
      return "budget share spent";
    case SearchEnd::time:
      return "time share spent";
    case SearchEnd::stopped:
      return "stopped";
    case SearchEnd::context_lost:
      return "context lost";
  }
  return "?";
}

std::optional<TimingStats> TuneOutcome::best_stats() const {
  if (!best_row) return std::nullopt;
  db::Measurement const& row = best_measurement();
  double const median_ms = best_median_ms();
  return TimingStats{.median_ms = median_ms,
                     .p20_ms = row.p20_ms.value_or(median_ms),
                     .p80_ms = row.p80_ms.value_or(median_ms),
                     .min_ms = row.min_ms.value_or(median_ms),
                     .max_ms = row.max_ms.value_or(median_ms),
                     .runs = row.runs.value_or(0)};
}

std::optional<double> count_answer(TuneOutcome& outcome, std::string const& text, db::Measurement const& row,
                                   CandidateCost const& cost) {
  outcome.rows.emplace_back(text, row);
  outcome.costs.push_back(cost);
  auto const median_ms = cost_of(row);
  if (!median_ms) {
    ++outcome.rejected;
    return median_ms;
  }
  if (outcome.best_row && *median_ms >= outcome.best_median_ms()) return median_ms;
  outcome.best_row = outcome.rows.size() - 1;
  return median_ms;
}

}  // namespace fl::tuner
