// The best family per problem from fa-tune's rows, and its runner-up (winners_of, tune_command.hpp).
#include <algorithm>

#include "tuner/tune/tune_command.hpp"

namespace fl::tuner {

std::vector<ProblemWinner> winners_of(std::vector<TuneRow> const& rows) {
  std::vector<ProblemWinner> winners;
  for (auto const& row : rows) {
    auto it = std::find_if(winners.begin(), winners.end(),
                           [&](ProblemWinner const& w) { return w.problem == row.problem; });
    if (it == winners.end()) {
      ProblemWinner fresh;
      fresh.problem = row.problem;
      winners.push_back(std::move(fresh));
      it = winners.end() - 1;
    }
    if (row.end != SearchEnd::not_reached) it->reached = true;
    if (row.best_config.empty()) continue;
    ++it->families_tried;
    if (row.best_tflops > it->tflops) {
      if (!it->family.empty()) {
        it->runner_up_family = it->family;
        it->runner_up_tflops = it->tflops;
      }
      it->family = row.family;
      it->config = row.best_config;
      it->tflops = row.best_tflops;
      it->median_ms = row.best_ms;
    } else if (row.best_tflops > it->runner_up_tflops) {
      it->runner_up_family = row.family;
      it->runner_up_tflops = row.best_tflops;
    }
  }
  return winners;
}

}  // namespace fl::tuner
