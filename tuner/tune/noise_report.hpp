#pragma once
// The noise report of `fa-tune --noise-runs N`: the same tuning run repeated, every candidate measured again,
// and each repeat compared with the first run: did the winner change, by how much, were the two winners
// apart by more than their p20-p80 spread, how many candidates changed rank.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/tuning_store.hpp"
#include "device/config.hpp"

namespace fl::tuner {

using RunRows = std::vector<std::pair<std::string, db::Measurement>>;  // config text -> its row in one run

struct NoiseComparison {
  int repeat_index = 2;  // the run compared with run 1
  std::string winner_first, winner_repeat;
  double best_ms_first = 0.0;   // run 1's winner, as run 1 measured it
  double best_ms_repeat = 0.0;  // the repeat's winner, as the repeat measured it
  bool winner_changed = false;
  // In the repeat: run 1's winner median and [p20, p80] beside the repeat's winner's; whether the two
  // intervals overlap (a changed winner inside the noise) .
  std::optional<double> first_winner_ms_in_repeat;
  bool winners_overlap = true;
  int compared = 0;           // configs ok in both runs
  int rank_changed = 0;       // of those, how many sit at another rank
  long discordant_pairs = 0;  // pairs ordered differently by the two runs (Kendall distance)
  long pairs = 0;
  double median_abs_change = 0.0;  // |median_repeat / median_first - 1| over the compared configs
  double max_abs_change = 0.0;
  std::string max_change_config;
  // The repeat's own cost (s): wall, waiting for compiles, verification, timing; NVRTC on the workers.
  double wall_s = 0.0, compile_wait_s = 0.0, verify_s = 0.0, timing_s = 0.0, compile_cpu_s = 0.0;
};

NoiseComparison compare_runs(RunRows const& first, RunRows const& repeat, int repeat_index);

// What a repeat measures: the configs of run 1's rows, in run 1's order (run 1 starts from the rows stored
// before it, which a replay of the strategy would not propose, so the repeat does not replay it).
std::vector<device::Config> configs_of(RunRows const& rows);

// One line per comparison, for the terminal.
std::string render_noise(std::string const& label, NoiseComparison const& c);
// A JSON object (no trailing newline).
std::string noise_json(NoiseComparison const& c);

}  // namespace fl::tuner
