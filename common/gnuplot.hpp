#pragma once
// SVG plots drawn by gnuplot (Debian's gnuplot-nox), never hand-assembled. The script gets the terminal
// and output lines prepended; the SVG is written to a temporary name and renamed. Without a working
// gnuplot the call returns false and the caller says the plot was skipped.
#include <filesystem>
#include <string>

namespace fl::common {

constexpr char const* kDefaultGnuplot = "gnuplot";
// Time limits (coreutils' timeout; then KILL): a version query answers at once; the largest plot drawn here
// (fa-check's per-row error over 16384 rows) takes about a second, so a render past two minutes is stuck.
constexpr int kGnuplotVersionSeconds = 10;
constexpr int kGnuplotRenderSeconds = 120;

// True when `gnuplot` (a command name on PATH or a path) runs and says it is gnuplot.
bool gnuplot_available(std::string const& gnuplot);

// Runs `script` (plot commands; data files referenced by absolute path) and writes `svg`.
bool render_svg(std::string const& gnuplot, std::string const& script, std::filesystem::path const& svg);

// A string as a gnuplot single-quoted literal.
std::string gnuplot_quote(std::string const& s);

}  // namespace fl::common
