// fa-stability-report: experiments/stability's CPU part (numerics/stability_study): the deviation of the
// tiled FlashAttention forward from the float64 reference against standard attention in the same
// precision, over n and kBlockN. Writes results.csv into --out (plots: experiments/stability/plot.sh).
#include <boost/program_options.hpp>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/cli_lists.hpp"
#include "common/exit_codes.hpp"
#include "common/input_limits.hpp"
#include "common/strict_command_line.hpp"
#include "numerics/stability_study.hpp"

namespace po = boost::program_options;
using namespace fl::numerics;

namespace {

constexpr char const* kResultsFile = "results.csv";

std::vector<int> int_list(po::variables_map const& vm, char const* option) {
  std::string const text = vm[option].as<std::string>();
  auto const values = fl::common::parse_positive_int_list(text);
  if (!values)
    throw po::error(std::string("--") + option + " " + text + ": expected comma-separated positive integers");
  return *values;
}

template <class T, class Parse>
std::vector<T> word_list(po::variables_map const& vm, char const* option, Parse parse, char const* allowed) {
  std::string const text = vm[option].as<std::string>();
  auto const words = fl::common::parse_word_list(text);
  if (!words) throw po::error(std::string("--") + option + " " + text + ": expected a comma-separated list");
  std::vector<T> out;
  for (std::string const& w : *words) {
    auto const v = parse(w);
    if (!v) throw po::error(std::string("--") + option + " " + w + ": unknown; use " + allowed);
    out.push_back(*v);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  StabilityOptions study;  // --head-dim and --seqlens are read straight into it (common::count_value)
  po::options_description options(
      "fa-stability-report: how far the tiled FlashAttention forward (CPU emulator) and standard attention "
      "land "
      "from the float64 reference in the same precision, against n and kBlockN (after Golden et al. 2024, "
      "\"Is "
      "Flash Attention Stable?\"). Writes results.csv.\n\nOptions");
  options.add_options()                                                                                   //
      ("help,h", "print this help")                                                                       //
      ("out", po::value<std::string>()->default_value("experiments/stability/results"), "output folder")  //
      ("seqlens",
       fl::common::count_list_value(kStabilitySeqlen, &study.seqlens)
           ->default_value("256,512,1024,2048,4096,8192,16384"),
       ("n (= N_q = N_k), each " + fl::common::range_text(kStabilitySeqlen)).c_str())  //
      ("block-n", po::value<std::string>()->default_value("16,32,64,128,256"),
       "kBlockN of the tiled runs")                                                                   //
      ("precisions", po::value<std::string>()->default_value("bf16,fp16"), "claimed precisions")      //
      ("families", po::value<std::string>()->default_value("normal,fa3_outliers"), "input families")  //
      ("head-dim", fl::common::count_value(kFamilyHeadDim, &study.head_dim)->default_value("64"),
       "head dimension (2..1024)")                                          //
      ("seed", po::value<std::string>()->default_value("1"), "input seed")  //
      ("threads", po::value<std::string>()->default_value("0"), "worker threads (0: all cores)");
  po::variables_map vm;
  std::filesystem::path out;
  try {
    vm = fl::common::parse_strictly(argc, argv, options);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return fl::common::kExitOk;
    }
    study.block_ns = int_list(vm, "block-n");
    study.precisions = word_list<fl::common::Precision>(
        vm, "precisions", [](std::string const& w) { return fl::common::parse_precision(w); },
        "fp32, fp16, bf16");
    for (fl::common::Precision p : study.precisions)
      if (is_fp8(p))
        throw po::error("--precisions " + std::string(name(p)) + ": FP8 is experiments/fp8_error_analysis");
    study.families = word_list<InputFamily>(
        vm, "families", [](std::string const& w) { return parse_input_family(w); },
        "fa-check's input family names");
    // Counts as typed: boost would read "--seed -3" as 2^64 - 3 and take any --threads.
    auto const seed = fl::common::parse_count(fl::common::kSeed, vm["seed"].as<std::string>());
    if (!seed.ok()) throw po::error(seed.error);
    study.seed = static_cast<std::uint64_t>(seed.value);
    auto const threads = fl::common::parse_count(fl::common::kThreads, vm["threads"].as<std::string>());
    if (!threads.ok()) throw po::error(threads.error);
    study.threads = static_cast<int>(threads.value);
    // The output is decided before the study (minutes): a folder under a regular file ran it all and then
    // aborted on an uncaught filesystem error.
    out = vm["out"].as<std::string>();
    if (auto problem = fl::common::output_folder_problem(out))
      throw po::error("--out " + out.string() + ": " + *problem);
    if (auto problem = fl::common::output_files_problem(out, {kResultsFile}))
      throw po::error("--out " + out.string() + ": " + *problem);
  } catch (po::error const& e) {
    std::cerr << "fa-stability-report: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  } catch (std::invalid_argument const& e) {
    std::cerr << "fa-stability-report: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  }
  try {
    std::vector<StabilityRow> const rows = run_stability_study(study, [](StabilityRow const& r) {
      std::cerr << name(r.family) << " " << name(r.precision) << " (O in " << name(r.output) << ") n"
                << r.seqlen << " " << r.method;
      if (r.block_n) std::cerr << " kBlockN " << r.block_n;
      std::cerr << ": max |O - ref| " << std::scientific << std::setprecision(3) << r.max_abs << ", rmse "
                << r.rmse << std::defaultfloat << " (" << r.rows << " rows)\n";
    });
    std::string csv = stability_csv_header();
    for (StabilityRow const& r : rows) csv += stability_csv_line(r, study.head_dim, "");
    std::filesystem::create_directories(out);
    fl::common::write_file_atomically(out / kResultsFile, csv);
    std::cout << "fa-stability-report: " << rows.size() << " rows -> " << (out / kResultsFile).string()
              << "\n";
  } catch (std::invalid_argument const& e) {  // a combination the study refuses: the user's
    std::cerr << "fa-stability-report: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  } catch (std::exception const& e) {  // a failure of the machine (disk full, ...), not of the user
    std::cerr << "fa-stability-report: " << e.what() << "\n";
    return fl::common::kExitCheckFailed;
  }
  return fl::common::kExitOk;
}
