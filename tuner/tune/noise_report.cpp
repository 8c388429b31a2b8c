#include "tuner/tune/noise_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace fl::tuner {

namespace {

struct Timed {
  double median, p20, p80;
};

std::map<std::string, Timed> ok_rows(RunRows const& rows) {
  std::map<std::string, Timed> out;
  for (auto const& [config, m] : rows)
    if (m.verdict == "ok" && m.median_ms)
      out[config] = {*m.median_ms, m.p20_ms.value_or(*m.median_ms), m.p80_ms.value_or(*m.median_ms)};
  return out;
}

std::optional<std::pair<std::string, Timed>> winner(std::map<std::string, Timed> const& rows) {
  std::optional<std::pair<std::string, Timed>> best;
  for (auto const& row : rows)
    if (!best || row.second.median < best->second.median) best = row;
  return best;
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string quoted(std::string const& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

NoiseComparison compare_runs(RunRows const& first, RunRows const& repeat, int repeat_index) {
  NoiseComparison c;
  c.repeat_index = repeat_index;
  auto const a = ok_rows(first);
  auto const b = ok_rows(repeat);
  auto const wa = winner(a);
  auto const wb = winner(b);
  if (wa) {
    c.winner_first = wa->first;
    c.best_ms_first = wa->second.median;
  }
  if (wb) {
    c.winner_repeat = wb->first;
    c.best_ms_repeat = wb->second.median;
  }
  c.winner_changed = c.winner_first != c.winner_repeat;
  if (wa && wb) {
    if (auto it = b.find(wa->first); it != b.end()) {
      c.first_winner_ms_in_repeat = it->second.median;
      c.winners_overlap = it->second.p20 <= wb->second.p80 && wb->second.p20 <= it->second.p80;
    } else {
      c.winners_overlap =
          false;  // the repeat never measured run 1's winner (a guided strategy went elsewhere)
    }
  }

  std::vector<std::string> both;
  for (auto const& [config, t] : a)
    if (b.contains(config)) both.push_back(config);
  c.compared = int(both.size());
  std::vector<double> changes;
  for (auto const& config : both) {
    double const change = std::fabs(b.at(config).median / a.at(config).median - 1.0);
    changes.push_back(change);
    if (change > c.max_abs_change) {
      c.max_abs_change = change;
      c.max_change_config = config;
    }
  }
  if (!changes.empty()) {
    std::sort(changes.begin(), changes.end());
    std::size_t const mid = changes.size() / 2;
    c.median_abs_change = changes.size() % 2 ? changes[mid] : 0.5 * (changes[mid - 1] + changes[mid]);
  }
  auto ranks = [&](std::map<std::string, Timed> const& rows) {
    std::vector<std::string> order = both;
    std::stable_sort(order.begin(), order.end(), [&](std::string const& x, std::string const& y) {
      return rows.at(x).median < rows.at(y).median;
    });
    std::map<std::string, int> rank;
    for (std::size_t i = 0; i < order.size(); ++i) rank[order[i]] = int(i);
    return rank;
  };
  auto const ra = ranks(a);
  auto const rb = ranks(b);
  for (auto const& config : both)
    if (ra.at(config) != rb.at(config)) ++c.rank_changed;
  for (std::size_t i = 0; i < both.size(); ++i)
    for (std::size_t j = i + 1; j < both.size(); ++j) {
      ++c.pairs;
      if ((ra.at(both[i]) < ra.at(both[j])) != (rb.at(both[i]) < rb.at(both[j]))) ++c.discordant_pairs;
    }
  return c;
}

std::vector<device::Config> configs_of(RunRows const& rows) {
  std::vector<device::Config> configs;
  for (auto const& [text, m] : rows)
    if (auto config = device::parse_config(text)) configs.push_back(std::move(*config));
  return configs;
}

std::string render_noise(std::string const& label, NoiseComparison const& c) {
  std::string line = label + ", run 1 vs run " + std::to_string(c.repeat_index) + ": ";
  if (c.winner_first.empty() || c.winner_repeat.empty()) return line + "no winner in one of the runs\n";
  if (!c.winner_changed) {
    line += "same winner (" + fixed(c.best_ms_first, 4) + " -> " + fixed(c.best_ms_repeat, 4) + " ms, " +
            fixed(100.0 * (c.best_ms_repeat / c.best_ms_first - 1.0), 2) + "%)";
  } else {
    line += "winner changed: " + c.winner_first + " " + fixed(c.best_ms_first, 4) + " ms -> " +
            c.winner_repeat + " " + fixed(c.best_ms_repeat, 4) + " ms (" +
            fixed(100.0 * (c.best_ms_repeat / c.best_ms_first - 1.0), 2) + "%); run 1's winner in run " +
            std::to_string(c.repeat_index) + ": " +
            (c.first_winner_ms_in_repeat ? fixed(*c.first_winner_ms_in_repeat, 4) + " ms" : "not measured") +
            (c.winners_overlap ? ", p20-p80 intervals overlap (within noise)" : ", p20-p80 intervals apart");
  }
  line += "; " + std::to_string(c.compared) + " configs in both, " + std::to_string(c.rank_changed) +
          " changed rank, " + std::to_string(c.discordant_pairs) + "/" + std::to_string(c.pairs) +
          " pairs swapped; median |change| " + fixed(100.0 * c.median_abs_change, 2) + "%, max " +
          fixed(100.0 * c.max_abs_change, 2) + "%";
  if (!c.max_change_config.empty()) line += " (" + c.max_change_config + ")";
  line += "; run " + std::to_string(c.repeat_index) + " took " + fixed(c.wall_s, 1) +
          " s: waited for compiles " + fixed(c.compile_wait_s, 1) + " s, verification " +
          fixed(c.verify_s, 1) + " s, timing " + fixed(c.timing_s, 1) + " s; NVRTC " +
          fixed(c.compile_cpu_s, 1) + " s";
  return line + "\n";
}

std::string noise_json(NoiseComparison const& c) {
  return "{\"repeat\": " + std::to_string(c.repeat_index) + ", \"winner_run1\": " + quoted(c.winner_first) +
         ", \"winner_repeat\": " + quoted(c.winner_repeat) +
         ", \"best_ms_run1\": " + fixed(c.best_ms_first, 5) +
         ", \"best_ms_repeat\": " + fixed(c.best_ms_repeat, 5) +
         ", \"winner_changed\": " + (c.winner_changed ? "true" : "false") +
         ", \"run1_winner_ms_in_repeat\": " +
         (c.first_winner_ms_in_repeat ? fixed(*c.first_winner_ms_in_repeat, 5) : "null") +
         ", \"winners_p20_p80_overlap\": " + (c.winners_overlap ? "true" : "false") +
         ", \"configs_compared\": " + std::to_string(c.compared) +
         ", \"configs_rank_changed\": " + std::to_string(c.rank_changed) +
         ", \"discordant_pairs\": " + std::to_string(c.discordant_pairs) +
         ", \"pairs\": " + std::to_string(c.pairs) +
         ", \"median_abs_change\": " + fixed(c.median_abs_change, 5) +
         ", \"max_abs_change\": " + fixed(c.max_abs_change, 5) + ", \"wall_s\": " + fixed(c.wall_s, 3) +
         ", \"compile_wait_s\": " + fixed(c.compile_wait_s, 3) + ", \"verify_s\": " + fixed(c.verify_s, 3) +
         ", \"timing_s\": " + fixed(c.timing_s, 3) + ", \"compile_cpu_s\": " + fixed(c.compile_cpu_s, 3) +
         "}";
}

}  // namespace fl::tuner
