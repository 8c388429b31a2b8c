#pragma once
// fa-fp8-report's output: runs the study and writes results.csv, report.md (the tables, beside
// FlashAttention-3's Table 3) and the gnuplot SVGs under `out`, each file written then renamed.
// tools/fa_fp8_report_main.cpp parses the command line into the study's options.
#include <filesystem>
#include <string>
#include <vector>

#include "numerics/fp8_study.hpp"

namespace fl::tools {

// The exit code (0; a plot gnuplot cannot draw is named in report.md, not an error). Throws on a failure
// of the machine (a file that cannot be written).
// The files write_fp8_report writes inside `out` for `study` (results.csv, report.md, the plots): named here,
// from the writer's own names, so that fa-fp8-report checks each before the study rather than failing on
// one after it.
std::vector<std::string> fp8_report_files(numerics::Fp8StudyOptions const& study);

int write_fp8_report(std::filesystem::path const& out, std::string const& gnuplot,
                     numerics::Fp8StudyOptions const& study, std::string const& command_line);

}  // namespace fl::tools
