// fa-explain: the online softmax of one row, block by block, for the correct algorithm and for catalogued
// mutants side by side (numerics/explain). Parses the command line, prints render_text and, with --csv,
// writes render_csv.
#include <boost/program_options.hpp>

#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/exit_codes.hpp"
#include "common/input_limits.hpp"
#include "common/strict_command_line.hpp"
#include "numerics/emulator/prepared_problem.hpp"
#include "numerics/explain/explain.hpp"

namespace po = boost::program_options;
using namespace fl::numerics;

namespace {

constexpr char const* kUsage =
    "fa-explain: the online softmax of one attention row, step by step.\n"
    "\n"
    "After each key block it prints the running max m, the scale exp(m_old - m_new) that the old sum and\n"
    "output are multiplied by, the running sum l and the output so far, for the correct algorithm and, side\n"
    "by side, for catalogued bugs (mutants), then the final output beside the float64 answer and notes on\n"
    "what happened (why scale = 0 in the first block is not a bug, where a bug's output lands). The\n"
    "arithmetic is the CPU emulator's (fp32 statistics, FlashAttention-2 loop order), mutant switches\n"
    "included, so what it shows is what fa-check and fa-mutate run.\n"
    "\n"
    "The row: either given, or drawn from an input family.\n"
    "  fa-explain --scores 1,3,2,5,0.5,4 --values 10,20,30,40,50,60 --block 2 --mutant unrescaled-o\n"
    "  fa-explain --scores 1,3 --values 1,0,0,1 --head-dim 2 --block 1\n"
    "  fa-explain --family all_negative --keys 64 --block 16 --mutant m-init-zero\n"
    "Given scores are the softmax's inputs (softmax scale 1 unless --softmax-scale), taken in fp32; -inf\n"
    "marks a masked key. Values: one per score, or --head-dim numbers per score (row-major).\n"
    "\n"
    "--csv FILE writes the same trace as data, for plots: one line per block, variant and output component,\n"
    "  step,block,first_key,last_key,variant,dim,m,scale,l,output_so_far,answer\n"
    "(step: blocks in the order visited; answer: the float64 reference's component; full precision).\n"
    "\n"
    "Options";

std::vector<double> parse_number_list(std::string const& text, char const* option) {
  std::vector<double> out;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (item == "-inf") {
      out.push_back(-INFINITY);
      continue;
    }
    try {
      std::size_t used = 0;
      double const v = std::stod(item, &used);
      if (used != item.size() || !std::isfinite(v)) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (std::exception const&) {
      throw po::error(std::string("--") + option + " " + text + ": '" + item +
                      "' is not a number (comma-separated numbers; -inf for a masked score)");
    }
  }
  if (out.empty() || text.back() == ',')
    throw po::error(std::string("--") + option + " " + text + ": empty item");
  return out;
}

std::vector<mutants::MutantId> parse_mutants(std::vector<std::string> const& given,
                                             fl::common::Precision precision, bool given_scores) {
  std::vector<mutants::MutantId> out;
  for (std::string const& text : given) {
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
      if (item == "all") {
        for (mutants::MutantId id : explain::explainable_mutants(precision, given_scores)) out.push_back(id);
        continue;
      }
      auto id = mutants::find_mutant(item);
      if (!id) {
        std::string names;
        for (auto const& m : mutants::kCatalogue) names += (names.empty() ? "" : ", ") + std::string(m.name);
        throw po::error("--mutant " + item + ": unknown; the catalogue holds " + names + " (or all)");
      }
      out.push_back(*id);
    }
  }
  // A mutant named twice was shown twice, side by side with itself.
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out[i] == out[j])
        throw po::error("--mutant " + std::string(mutants::info(out[i]).name) +
                        " is named twice (each mutant once; all names every one)");
  return out;
}

// Each count with its range (common/input_limits.hpp and the emulator's tile limit): one line naming the
// option and the range for any value outside it, trailing junk or a number beyond 64 bits included.
constexpr fl::common::CountRange kBlock{"--block", 1, emulator::kMaxTile};
constexpr fl::common::CountRange kRow{"--row", 0, fl::common::kExplainKeys.max - 1};
constexpr fl::common::CountRange kShowDims{"--show-dims", 1, fl::common::kHeadDim.max};

// The options of the other way to give the row, refused instead of silently unused.
void refuse_options_of_other_mode(po::variables_map const& vm, bool given_scores) {
  char const* const family_only[] = {"seed", "keys", "row", "causal"};
  for (char const* option : family_only)
    if (given_scores && vm.count(option) && !vm[option].defaulted())
      throw po::error(std::string("--") + option + " is for a --family draw (given --scores are the row)");
  if (!given_scores && vm.count("softmax-scale") && !vm["softmax-scale"].defaulted())
    throw po::error("--softmax-scale is for given --scores (a --family draw uses 1/sqrt(head dim))");
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 1;
  int keys = 256, block = 64, show_dims = 4, head_dim = 0;
  long long row = -1;
  double softmax_scale = 1.0;
  po::options_description options(kUsage);
  options.add_options()                                                                                     //
      ("help,h", "print this help")                                                                         //
      ("scores", po::value<std::string>(), "the row's scores, comma-separated (with --values)")             //
      ("values", po::value<std::string>(), "the values, one per score or --head-dim per score")             //
      ("family", po::value<std::string>(), "draw the row from an input family instead (fa-check's names)")  //
      ("seed", fl::common::count_value(fl::common::kSeed, &seed)->default_value("1"),
       "seed of the family draw (0..2^63-1)")  //
      ("keys", fl::common::count_value(fl::common::kExplainKeys, &keys)->default_value("256"),
       "keys (and query rows) of the family draw (1..65536)")  //
      ("row", fl::common::count_value(kRow, &row),
       "query row of the family draw, 0..keys-1 (default: the first row with the family's property)")  //
      ("causal", "family draw: causal mask (bottom-right aligned)")                                    //
      ("head-dim",
       fl::common::count_value(fl::common::as_option(fl::common::kHeadDim, "--head-dim"), &head_dim),
       "dimension of each value, 1..1024 (default 1 for given scores, 64 for a family, which needs >= 2)")  //
      ("block", fl::common::count_value(kBlock, &block)->default_value("64"),
       "keys per block (kBlockN), 1..1024")  //
      ("mutant", po::value<std::vector<std::string>>(),
       "catalogued bug to show beside the correct algorithm (repeat, comma list, or all; each once)")  //
      ("precision", po::value<std::string>()->default_value("fp64"),
       "fp64: the steps in float64 (the lesson's numbers); fp32, fp16, bf16, fp8_e4m3, fp8_e5m2: a kernel "
       "claiming that precision, in the emulator's arithmetic (values and P rounded to it)")  //
      ("softmax-scale",
       fl::common::positive_number_value("--softmax-scale", &softmax_scale)->default_value("1"),
       "given scores: the softmax scale (a positive finite number)")  //
      ("key-order", po::value<std::string>()->default_value("first-to-last"),
       "order of the key blocks: first-to-last, or last-to-first (as fa2_sm80 walks them)")  //
      ("show-dims", fl::common::count_value(kShowDims, &show_dims)->default_value("4"),
       "components of a vector output printed (1..1024)")  //
      ("csv", po::value<std::string>(),
       "also write the trace as CSV to this file (every block, variant and component, full precision)");
  po::variables_map vm;
  try {
    // Strict (common/strict_command_line.hpp): a stray word, a control byte (a newline made the complaint
    // two lines) or a count out of range is one line, exit code 2.
    vm = fl::common::parse_strictly(argc, argv, options);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return fl::common::kExitOk;
    }
    bool const given = vm.count("scores") || vm.count("values");
    if (given && vm.count("family"))
      throw po::error("--scores/--values and --family: give one row, not both");
    if (!given && !vm.count("family")) throw po::error("no row: give --scores and --values, or --family");
    if (given && !(vm.count("scores") && vm.count("values")))
      throw po::error(vm.count("scores") ? "--scores needs --values" : "--values needs --scores");
    refuse_options_of_other_mode(vm, given);
    std::string const precision_text = vm["precision"].as<std::string>();
    bool const exact = precision_text == "fp64";
    // fp64 runs the steps in float64 on fp32 operands.
    auto const precision = exact ? std::optional<fl::common::Precision>(fl::common::Precision::fp32)
                                 : fl::common::parse_precision(precision_text);
    if (!precision)
      throw po::error("--precision " + precision_text +
                      ": unknown; use fp64, fp32, fp16, bf16, fp8_e4m3 or fp8_e5m2");
    std::string const order = vm["key-order"].as<std::string>();
    if (order != "first-to-last" && order != "last-to-first")
      throw po::error("--key-order " + order + ": use first-to-last or last-to-first");
    // The CSV's path judged before the work, as every command's output file is.
    std::optional<std::string> csv;
    if (vm.count("csv")) {
      csv = vm["csv"].as<std::string>();
      if (auto problem = fl::common::output_file_problem(*csv))
        throw po::error("--csv " + *csv + ": " + *problem);
    }

    explain::RowProblem problem;
    if (given) {
      problem = explain::row_from_scores(parse_number_list(vm["scores"].as<std::string>(), "scores"),
                                         parse_number_list(vm["values"].as<std::string>(), "values"),
                                         vm.count("head-dim") ? head_dim : 1, softmax_scale, *precision);
    } else {
      explain::FamilyRowRequest request;
      auto const family = parse_input_family(vm["family"].as<std::string>());
      if (!family) {
        std::string names;
        for (InputFamily f : all_input_families())
          names += (names.empty() ? "" : ", ") + std::string(name(f));
        throw po::error("--family " + vm["family"].as<std::string>() + ": unknown; use one of " + names);
      }
      request.family = *family;
      request.keys = keys;
      request.head_dim = vm.count("head-dim") ? head_dim : 64;
      request.seed = seed;
      request.causal = vm.count("causal") > 0;
      request.row = vm.count("row") ? row : -1;
      request.precision = *precision;
      problem = explain::row_from_family(request);
    }
    std::vector<mutants::MutantId> const mutant_ids =
        vm.count("mutant")
            ? parse_mutants(vm["mutant"].as<std::vector<std::string>>(), *precision, problem.given_scores)
            : std::vector<mutants::MutantId>{};
    explain::Explanation const x = explain::explain_row(
        problem, block, mutant_ids, exact ? emulator::TraceArithmetic::fp64 : emulator::TraceArithmetic::fp32,
        order == "first-to-last" ? emulator::KeyOrder::first_to_last : emulator::KeyOrder::last_to_first);
    std::cout << explain::render_text(problem, x, {show_dims});
    if (csv) {
      try {
        fl::common::write_file_atomically(*csv, explain::render_csv(x));
      } catch (std::runtime_error const& e) {
        throw po::error(std::string("--csv: ") + e.what());
      }
    }
  } catch (po::error const& e) {
    std::cerr << "fa-explain: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  } catch (std::invalid_argument const& e) {
    std::cerr << "fa-explain: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  }
  return fl::common::kExitOk;
}
