#pragma once
// What fa-check prints and writes: the one-screen summary, the JSON report (always with "verdict",
// metrics per output, "diagnosis"), and the --report folder: report.md with metrics.csv, rows.csv,
// histogram.csv beside it and three SVG plots drawn by gnuplot (error histogram, error against the
// number of keys a row sees, per-row error along the sequence). Without gnuplot the report says the plots
// were skipped and keeps the CSV.
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "numerics/check.hpp"

namespace fl::numerics {

struct CheckContext {
  std::string command_line;
  std::string input_dtype;                                 // dtype of the Q file
  std::vector<std::pair<std::string, std::string>> files;  // option, path
};

std::string check_json(CheckResult const& r, common::AttentionShape const& shape,
                       CheckContext const& context);

void print_check_summary(std::ostream& out, CheckResult const& r, common::AttentionShape const& shape);

struct ReportOutcome {
  bool plots_drawn = false;
  std::vector<std::filesystem::path> written;
};

// Creates `dir` if needed. Every file is written to a temporary name and renamed.
ReportOutcome write_check_report(std::filesystem::path const& dir, CheckResult const& r,
                                 common::AttentionShape const& shape, CheckContext const& context,
                                 std::string const& gnuplot);

// "2026-11-30 14:05 UTC"
std::string utc_timestamp();

}  // namespace fl::numerics
