#include "tuner/tune/tune_plots.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/gnuplot.hpp"
#include "device/families/registry.hpp"
#include "tuner/report/table.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/strategy/simulation.hpp"

namespace fl::tuner {

namespace {

constexpr std::uint64_t kReplaySeed = 1;  // the seed of each strategy replayed for the convergence plot

struct Timed {
  std::string config;
  double tflops;
};

std::vector<Timed> timed_configs(TuneRow const& row) {
  std::vector<Timed> timed;
  for (auto const& [config, m] : row.candidates)
    if (m.verdict == "ok" && m.tflops) timed.push_back({config, *m.tflops});
  return timed;
}

std::string slug(std::size_t index, TuneRow const& row) {
  std::string s = std::to_string(index) + "_" + row.family + "_" + row.problem;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

std::string quoted_path(std::filesystem::path const& p) {
  return common::gnuplot_quote(std::filesystem::absolute(p).string());
}

struct Plot {
  std::filesystem::path svg;
  std::string caption;
  std::string script;
};

}  // namespace

std::vector<std::string> most_important_tunables(RunRows const& rows) {
  // Per tunable and value: the best TFLOP/s of the timed configs with that value.
  std::map<std::string, std::map<int, double>> best;
  for (auto const& [text, m] : rows) {
    if (m.verdict != "ok" || !m.tflops) continue;
    auto const config = device::parse_config(text);
    if (!config) continue;
    for (auto const& [name, value] : *config) {
      auto& b = best[name][value];
      b = std::max(b, *m.tflops);
    }
  }
  std::vector<std::pair<double, std::string>> spread;
  for (auto const& [name, per_value] : best) {
    if (per_value.size() < 2) continue;
    double lo = 1e300, hi = 0.0;
    for (auto const& [value, tflops] : per_value) {
      lo = std::min(lo, tflops);
      hi = std::max(hi, tflops);
    }
    spread.emplace_back(hi / lo, name);
  }
  std::stable_sort(spread.begin(), spread.end(),
                   [](auto const& a, auto const& b) { return a.first > b.first; });
  std::vector<std::string> names;
  for (std::size_t i = 0; i < spread.size() && i < 2; ++i) names.push_back(spread[i].second);
  return names;
}

TuneReportOutcome write_tune_report(TuningReport const& report, std::filesystem::path const& dir,
                                    std::string const& gnuplot) {
  TuneReportOutcome outcome;
  std::filesystem::create_directories(dir);
  auto write = [&](std::string const& name, std::string const& text) {
    common::write_file_atomically(dir / name, text);
    outcome.written.push_back(dir / name);
  };
  std::string const common_setup = "set datafile separator ','\nset grid\nset key outside right\n";
  std::vector<Plot> plots;

  // Time by stage, one bar per problem and family. A replay of a recording made before the stage times were
  // recorded (the 2026-11-29 fixture) has none: an empty plot would say "no time", so it is not drawn.
  std::ostringstream stages;
  stages << "label,compile_wait_s,verify_s,timing_s\n";
  bool stage_times = false;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    auto const& r = report.rows[i];
    if (r.end == SearchEnd::not_reached) continue;
    stages << i << " " << r.family << "," << r.compile_wait_s << "," << r.verify_s << "," << r.timing_s
           << "\n";
    stage_times = stage_times || r.compile_wait_s + r.verify_s + r.timing_s > 0.0;
  }
  write("stages.csv", stages.str());
  if (stage_times)
    plots.push_back({dir / "stages.svg", "Where the GPU thread's time went, per problem and family (s)",
                     common_setup +
                         "set style data histograms\nset style histogram rowstacked\n"
                         "set style fill solid 0.7\nset boxwidth 0.6\nset ylabel 'seconds'\n"
                         "set xtics rotate by -30\nplot " +
                         quoted_path(dir / "stages.csv") +
                         " using 2:xtic(1) title 'waiting for compiles', '' using 3 title 'verification', "
                         "'' using 4 title 'timing'\n"});

  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    auto const& r = report.rows[i];
    auto timed = timed_configs(r);
    if (timed.empty()) continue;
    auto const name = slug(i, r);
    std::sort(timed.begin(), timed.end(), [](Timed const& a, Timed const& b) { return a.tflops > b.tflops; });
    // Sorted TFLOP/s: column 3 marks the default (1), the winner (2), others (0).
    std::ostringstream sorted;
    sorted << "rank,tflops,mark,config\n";
    for (std::size_t k = 0; k < timed.size(); ++k)
      sorted << k + 1 << "," << timed[k].tflops << ","
             << (timed[k].config == r.best_config      ? 2
                 : timed[k].config == r.default_config ? 1
                                                       : 0)
             << "," << timed[k].config << "\n";
    write(name + "_configs.csv", sorted.str());
    auto const csv = quoted_path(dir / (name + "_configs.csv"));
    plots.push_back(
        {dir / (name + "_configs.svg"),
         r.family + " " + r.problem + ": TFLOP/s of every timed config, fastest first (" +
             std::to_string(timed.size()) + " timed of " + std::to_string(r.evaluated + r.resumed) +
             " evaluated)",
         common_setup + "set xlabel 'rank'\nset ylabel 'TFLOP/s'\nset yrange [0:*]\nplot " + csv +
             " skip 1 using 1:2 with impulses lw 2 lc rgb '#9999cc' title 'config', " + csv +
             " skip 1 using 1:($3 == 1 ? $2 : 1/0) with points pt 7 ps 1.2 lc rgb 'orange' title "
             "'default', " +
             csv +
             " skip 1 using 1:($3 == 2 ? $2 : 1/0) with points pt 9 ps 1.6 lc rgb 'red' title 'winner'\n"});

    // Heat map over the two most important tunables: the best TFLOP/s of each pair of values.
    auto const axes = most_important_tunables(r.candidates);
    if (axes.size() == 2) {
      std::map<std::pair<int, int>, double> cell;
      std::set<int> xs, ys;
      for (auto const& t : timed) {
        auto const c = device::parse_config(t.config);
        if (!c || !c->contains(axes[0]) || !c->contains(axes[1])) continue;
        int const x = c->at(axes[0]), y = c->at(axes[1]);
        xs.insert(x);
        ys.insert(y);
        auto& v = cell[{x, y}];
        v = std::max(v, t.tflops);
      }
      std::ostringstream heat;
      heat << "x_index,y_index,tflops," << axes[0] << "," << axes[1] << "\n";
      std::vector<int> const xv(xs.begin(), xs.end()), yv(ys.begin(), ys.end());
      for (std::size_t a = 0; a < xv.size(); ++a)
        for (std::size_t b = 0; b < yv.size(); ++b)
          if (auto it = cell.find({xv[a], yv[b]}); it != cell.end())
            heat << a << "," << b << "," << it->second << "," << xv[a] << "," << yv[b] << "\n";
      write(name + "_heatmap.csv", heat.str());
      std::string xtics, ytics;
      for (std::size_t a = 0; a < xv.size(); ++a)
        xtics += (a ? ", " : "") + ("'" + std::to_string(xv[a]) + "' ") + std::to_string(a);
      for (std::size_t b = 0; b < yv.size(); ++b)
        ytics += (b ? ", " : "") + ("'" + std::to_string(yv[b]) + "' ") + std::to_string(b);
      plots.push_back({dir / (name + "_heatmap.svg"),
                       r.family + " " + r.problem + ": best TFLOP/s for each " + axes[0] + " x " + axes[1] +
                           " (the two tunables that move the best most; blank: nothing timed)",
                       common_setup + "set xlabel '" + axes[0] + "'\nset ylabel '" + axes[1] +
                           "'\nset xtics (" + xtics + ")\nset ytics (" + ytics +
                           ")\nset cblabel 'TFLOP/s'\nset palette rgbformulae 33,13,10\nunset grid\n"
                           "set xrange [-0.5:" +
                           std::to_string(xv.size()) +
                           "-0.5]\nset yrange [-0.5:" + std::to_string(yv.size()) + "-0.5]\nplot " +
                           quoted_path(dir / (name + "_heatmap.csv")) +
                           " skip 1 using 1:2:3 with points pt 5 ps 7 palette notitle, '' skip 1 using "
                           "1:2:(sprintf('%.0f', $3)) with labels notitle\n"});
    }

    // Best so far against evaluations: this run, and every strategy replayed when the whole space was
    // measured (the replay's costs are this run's measurements, so each curve is what that strategy would
    // have found here).
    std::ostringstream curve;
    curve << "evaluation,best_tflops\n";
    double best = 0.0;
    for (std::size_t k = 0; k < r.candidates.size(); ++k) {
      auto const& m = r.candidates[k].second;
      if (m.verdict == "ok" && m.tflops) best = std::max(best, *m.tflops);
      curve << k + 1 << "," << best << "\n";
    }
    write(name + "_convergence_run.csv", curve.str());
    std::string lines = quoted_path(dir / (name + "_convergence_run.csv")) +
                        " skip 1 using 1:2 with steps lw 3 title 'this run (" + report.strategy + ")'";
    auto family = device::find_family(r.family);
    if (family && r.evaluated + r.resumed >= int(r.space_size)) {
      auto const space = family_space(*family, r.problem_spec);
      std::map<std::string, db::Measurement> by_config(r.candidates.begin(), r.candidates.end());
      RecordedCost const cost = [&](device::Config const& c) -> std::optional<double> {
        auto it = by_config.find(device::to_string(c));
        if (it == by_config.end() || it->second.verdict != "ok") return std::nullopt;
        return it->second.median_ms;
      };
      double const flops_ms = r.best_tflops * r.best_ms;  // TFLOP/s x ms: the same for every config
      for (auto kind :
           {StrategyKind::exhaustive, StrategyKind::random, StrategyKind::anneal, StrategyKind::bayes}) {
        auto strategy = make_strategy(kind, space, kReplaySeed);
        auto const result = simulate(*strategy, space, cost, space.valid_points().size());
        std::ostringstream sim;
        sim << "evaluation,best_tflops\n";
        for (std::size_t k = 0; k < result.best_after.size(); ++k)
          sim << k + 1 << "," << (std::isfinite(result.best_after[k]) ? flops_ms / result.best_after[k] : 0.0)
              << "\n";
        auto const file = name + "_convergence_" + std::string(tuner::name(kind)) + ".csv";
        write(file, sim.str());
        lines += ", " + quoted_path(dir / file) + " skip 1 using 1:2 with steps title '" +
                 std::string(tuner::name(kind)) + " (replayed, seed 1)'";
      }
    }
    plots.push_back(
        {dir / (name + "_convergence.svg"),
         r.family + " " + r.problem + ": best TFLOP/s so far against evaluations",
         common_setup + "set xlabel 'evaluations'\nset ylabel 'best TFLOP/s so far'\nplot " + lines + "\n"});
  }

  bool const have_gnuplot = common::gnuplot_available(gnuplot);
  outcome.gnuplot_found = have_gnuplot;
  std::vector<Plot const*> drawn;
  if (have_gnuplot)
    for (auto const& p : plots)
      if (common::render_svg(gnuplot, p.script, p.svg)) {
        drawn.push_back(&p);
        outcome.written.push_back(p.svg);
      }
  if (have_gnuplot) outcome.plots_failed = int(plots.size() - drawn.size());

  std::ostringstream md;
  md << "# fa-tune report\n\n- GPU: " << report.gpu.name << ", driver " << report.gpu.driver_version
     << ", NVRTC " << report.nvrtc_version << "\n- strategy: " << report.strategy << "\n";
  if (!report.split_note.empty()) md << "- " << report.split_note << "\n";
  md << "\n| family | problem | best config | TFLOP/s | vs default | searched | ended "
        "|\n|---|---|---|---|---|---|---|\n";
  for (auto const& r : report.rows)
    md << "| " << r.family << " | " << r.problem << " | "
       << (r.best_config.empty() ? (r.end == SearchEnd::not_reached ? "(not reached)" : "(none passed)")
                                 : "`" + r.best_config + "`")
       << " | " << (r.best_config.empty() ? "" : format_fixed(r.best_tflops, 1)) << " | "
       << (r.default_tflops > 0 ? format_fixed(r.best_tflops / r.default_tflops, 2) + "x"
                                : "default " + r.default_verdict)
       << " | " << r.evaluated + r.resumed << "/" << r.space_size << " | " << name(r.end) << " |\n";
  md << "\n## Best family per problem\n\n| problem | family | TFLOP/s | runner-up | margin "
        "|\n|---|---|---|---|---|\n";
  for (auto const& w : report.winners)
    md << "| " << w.problem << " | " << (w.family.empty() ? "-" : w.family) << " | "
       << (w.family.empty() ? "" : format_fixed(w.tflops, 1)) << " | " << w.runner_up_family << " | "
       << (w.runner_up_tflops > 0 ? format_fixed(w.tflops / w.runner_up_tflops, 2) + "x" : "") << " |\n";
  md << "\n## Plots\n\n";
  if (!have_gnuplot)
    md << "Plots skipped: gnuplot (`" << gnuplot << "`) is not available. The data are in the CSV files.\n";
  if (!stage_times)
    md << "No plot of the time by stage: the candidates carry no stage times (a replay of a recording made "
          "before they were recorded).\n\n";
  for (auto const* p : drawn)
    md << "### " << p->caption << "\n\n![" << p->caption << "](" << p->svg.filename().string() << ")\n\n";
  write("report.md", md.str());
  return outcome;
}

}  // namespace fl::tuner
