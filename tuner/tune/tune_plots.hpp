#pragma once
// `fa-tune --report DIR`: Markdown with SVG plots drawn by gnuplot (common/gnuplot, as fa-check's reports):
// per problem and family, the TFLOP/s of every timed config (sorted; the default and the winner marked), a
// heat map over the two most important tunables (largest spread of the best TFLOP/s across their values),
// the best so far against evaluations (this run's strategy; with the whole space measured, every strategy
// replayed on the same measurements), and the time spent by stage (compile wait, verify, time) per problem.
// The data of each plot is written beside it as CSV.
#include <filesystem>
#include <string>
#include <vector>

#include "tuner/tune/tune_command.hpp"

namespace fl::tuner {

struct TuneReportOutcome {
  std::vector<std::filesystem::path> written;  // report.md, the CSVs and the SVGs drawn
  bool gnuplot_found = false;                  // false: no plots (the report says so; the CSVs are there)
  int plots_failed = 0;                        // plots gnuplot did not draw
};

TuneReportOutcome write_tune_report(TuningReport const& report, std::filesystem::path const& dir,
                                    std::string const& gnuplot = "gnuplot");

// The two tunables whose values move the best TFLOP/s most (spread of the per-value best), most first; fewer
// when the space has fewer tunables. Exposed for tests.
std::vector<std::string> most_important_tunables(RunRows const& rows);

}  // namespace fl::tuner
