// fa-fp8-report: the FP8 error analysis of experiments/fp8_error_analysis. Runs numerics/fp8_study over
// e4m3/e5m2 x per-tensor/per-block x incoherent or not x head dims x sequence lengths, forward and
// backward, on the normal and the FlashAttention-3 recipes, and writes results.csv, report.md (tables,
// beside FlashAttention-3's Table 3, and FlashAttention-3's recipe with each FP8 P variant) and SVG plots
// drawn by gnuplot.
#include <boost/program_options.hpp>

#include <iostream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/exit_codes.hpp"
#include "common/gnuplot.hpp"
#include "common/input_limits.hpp"
#include "common/strict_command_line.hpp"
#include "common/temporary_files.hpp"
#include "numerics/fp8_study.hpp"
#include "tools/fa_fp8_report_writer.hpp"

namespace po = boost::program_options;
using namespace fl::numerics;
using fl::common::as_option;
using fl::common::count_list_value;
using fl::common::kHeadDim;
using fl::common::kSeqlen;

namespace {

constexpr fl::common::CountRange kFullRowsUpTo{"--full-rows-up-to", 0, std::int64_t(1) << 16};

// --fp8-variants: comma-separated variant sets of numerics/fp8_variants.hpp ("two_term_q+two_term_v"), or
// "none".
std::vector<Fp8Variants> parse_variant_sets(std::string const& text) {
  std::vector<Fp8Variants> out;
  if (text == "none") return out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    auto const v = parse_fp8_variants(item);
    if (!v)
      throw po::error("--fp8-variants " + item + ": expected \"all\", \"none\" or comma-separated sets of " +
                      allowed_fp8_variant_names() + " joined by '+'");
    out.push_back(*v);
  }
  if (out.empty()) throw po::error("--fp8-variants needs at least one value (or \"none\")");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Fp8StudyOptions study;  // the counts are read straight into it (common::count_value)
  po::options_description options(
      "fa-fp8-report: FP8 attention error analysis (RMSE against a float64 reference), with "
      "plots.\n\nOptions");
  options.add_options()                                                                                    //
      ("help,h", "print this help")                                                                        //
      ("out", po::value<std::string>()->default_value("experiments/fp8_error_analysis"), "output folder")  //
      ("head-dims",
       count_list_value(as_option(kHeadDim, "--head-dims"), &study.head_dims)->default_value("64,128,256"),
       "head dims of the forward grid")  //
      ("seqlens",
       count_list_value(as_option(kSeqlen, "--seqlens"), &study.seqlens)
           ->default_value("512,1024,2048,4096,8192,16384"),
       "sequence lengths of the forward grid")  //
      ("backward-seqlens",
       count_list_value(as_option(kSeqlen, "--backward-seqlens"), &study.backward_seqlens)
           ->default_value("512,1024"),
       "sequence lengths of the backward runs (every row: O(n^2))")  //
      ("backward-head-dims",
       count_list_value(as_option(kHeadDim, "--backward-head-dims"), &study.backward_head_dims)
           ->default_value("128"),
       "head dims of the backward runs")  //
      ("fp8-variants", po::value<std::string>()->default_value("all"),
       "FP8 variant sets run on FlashAttention-3's recipe (forward): all, none, or a list")  //
      ("full-rows-up-to",
       fl::common::count_value(kFullRowsUpTo, &study.full_rows_limit)->default_value("1024"),
       "forward: every row up to this n (0..65536), one sampled 128-row tile above it")  //
      ("seed", po::value<std::string>()->default_value("1"), "input seed")               //
      ("threads", fl::common::count_value(fl::common::kThreads, &study.threads)->default_value("0"),
       "worker threads (0: all cores; at most 1024)")  //
      ("gnuplot", po::value<std::string>()->default_value(fl::common::kDefaultGnuplot), "gnuplot command");
  fl::common::exit_on_signals();
  po::variables_map vm;
  try {
    vm = fl::common::parse_strictly(argc, argv, options);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return fl::common::kExitOk;
    }
    // Both grids run the incoherent (Hadamard) variants, which need a power-of-two head dim.
    for (auto const& [option, dims] : {std::pair{"head-dims", &study.head_dims},
                                       std::pair{"backward-head-dims", &study.backward_head_dims}})
      for (int d : *dims)
        if ((d & (d - 1)) != 0)
          throw po::error(std::string("--") + option + " " + std::to_string(d) +
                          ": must be a power of two (Hadamard)");
    if (std::string const fv = vm["fp8-variants"].as<std::string>(); fv != "all")
      study.fp8_variants = parse_variant_sets(fv);
    auto const seed = fl::common::parse_count(fl::common::kSeed, vm["seed"].as<std::string>());
    if (!seed.ok()) throw po::error(seed.error);
    study.seed = std::uint64_t(seed.value);
    // The output is decided before the study (minutes), the files inside --out too: report.md or a plot that
    // was a folder ran it all and then failed on the write (exit 1).
    std::string const out = vm["out"].as<std::string>();
    if (auto problem = fl::common::output_folder_problem(out))
      throw po::error("--out " + out + ": " + *problem);
    if (auto problem = fl::common::output_files_problem(out, fl::tools::fp8_report_files(study)))
      throw po::error("--out " + out + ": " + *problem);
  } catch (po::error const& e) {
    std::cerr << "fa-fp8-report: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  }
  try {
    std::string command_line;
    for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
    return fl::tools::write_fp8_report(vm["out"].as<std::string>(), vm["gnuplot"].as<std::string>(), study,
                                       command_line);
  } catch (std::exception const& e) {  // a failure of the machine (disk full, ...), not of the user
    std::cerr << "fa-fp8-report: " << e.what() << "\n";
    return fl::common::kExitCheckFailed;
  }
}
