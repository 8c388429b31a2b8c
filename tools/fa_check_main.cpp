// fa-check: judge anyone's attention output (.npy files) against a float64 reference with a per-element
// tolerance for the precision it claims, or (--family, tools/fa_check/) one of our kernels run on the GPU.
// Exit 0 pass, 1 numerical failure, 2 bad input, 3 no GPU (--family only).
#include <boost/program_options.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/exit_codes.hpp"
#include "common/gnuplot.hpp"
#include "common/input_limits.hpp"
#include "common/stop_signals.hpp"
#include "common/strict_command_line.hpp"
#include "common/temporary_files.hpp"
#include "numerics/check.hpp"
#include "numerics/check_problem.hpp"
#include "numerics/check_report.hpp"
#include "numerics/diagnosis/fa_check_diagnoser.hpp"
#include "tools/fa_check/fa_check_family.hpp"

namespace po = boost::program_options;
using namespace fl::numerics;

namespace {

std::string join_argv(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

std::optional<std::filesystem::path> optional_path(po::variables_map const& vm, char const* key) {
  if (!vm.count(key)) return std::nullopt;
  return std::filesystem::path(vm[key].as<std::string>());
}

// --block-n 48 64 or --block-n 48,64: each a whole number in `range` ("99999999999" named no range).
std::vector<int> count_list(po::variables_map const& vm, fl::common::CountRange const& range) {
  std::vector<int> out;
  for (std::string const& token : vm[std::string(range.what.substr(2))].as<std::vector<std::string>>()) {
    std::stringstream items(token);
    for (std::string item; std::getline(items, item, ',');) {
      auto const parsed = fl::common::parse_count(range, item);
      if (!parsed.ok()) throw po::error(parsed.error);
      out.push_back(int(parsed.value));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  double scale = 0.0;  // 0: 1/sqrt(D)
  po::options_description options(
      "fa-check: forward/backward error of an attention implementation against a float64 reference.\n"
      "Arrays are .npy (float16, float32 or float64; bf16 values stored as float32), shaped (B, H, N, D) or "
      "(N, D);\n"
      "LSE (B, H, N) or (N). Or --family: our kernel, run on the GPU, judged the same way.\n"
      "Exit 0 pass, 1 numerical failure, 2 bad input, 3 no GPU (--family).\n\nOptions");
  options.add_options()                                                                                   //
      ("help,h", "print this help")                                                                       //
      ("q", po::value<std::string>(), "Q.npy (B, H_q, N_q, D): the queries the implementation consumed")  //
      ("k", po::value<std::string>(), "K.npy (B, H_kv, N_k, D); H_q must be a multiple of H_kv (GQA)")    //
      ("v", po::value<std::string>(), "V.npy (B, H_kv, N_k, D)")                                          //
      ("o", po::value<std::string>(), "O.npy (B, H_q, N_q, D): the implementation's output")              //
      ("lse", po::value<std::string>(),
       "LSE.npy (B, H_q, N_q): its log-sum-exp (natural log); -inf or +inf for rows with no visible key")  //
      ("do", po::value<std::string>(),
       "dO.npy (like Q): upstream gradient; with --dq --dk --dv checks the backward")  //
      ("dq", po::value<std::string>(), "dQ.npy (like Q)")                              //
      ("dk", po::value<std::string>(), "dK.npy (like K)")                              //
      ("dv", po::value<std::string>(), "dV.npy (like K)")                              //
      ("dtype", po::value<std::string>(),
       "precision the implementation claims: fp16, bf16, fp8_e4m3, fp8_e5m2 or fp32")  //
      ("causal", po::bool_switch(),
       "causal mask, bottom-right aligned when N_q != N_k (query i sees key j when j <= i + N_k - N_q)")  //
      ("causal-align", po::value<std::string>()->default_value("bottom-right"),
       "with --causal: bottom-right (FlashAttention 2.1+, the default) or top-left (PyTorch's "
       "is_causal=True: "
       "query i sees key j when j <= i)")  //
      ("scale", fl::common::positive_number_value("--scale", &scale),
       "softmax scale, a positive finite number (default 1/sqrt(D))")  //
      ("json", po::value<std::string>(),
       "write the JSON report here (verdict, metrics per output, worst rows, diagnosis)")  //
      ("report", po::value<std::string>(),
       "write report.md, CSV files and SVG plots (gnuplot) into this folder")  //
      ("sample-rows", po::value<std::string>(),
       "check this many random query rows (plus the structural and screened ones) instead of all; default: "
       "all rows when B*H*N_q*N_k*D <= 1.5e9, else 256")  //
      ("sample-key-rows", po::value<std::string>(),
       "with sampling: random key rows checked for dK, dV (default 64)")  //
      ("full", po::bool_switch(), "check every row, whatever the size")   //
      ("threads", fl::common::count_value(fl::common::kThreads, &threads)->default_value("0"),
       "worker threads (0: all cores; at most 1024)")  //
      ("block-n", po::value<std::vector<std::string>>()->multitoken()->default_value({}, ""),
       "on failure, also try these tile sizes (1..1024, besides 16..256) when matching catalogued bugs")  //
      ("warps-n", po::value<std::vector<std::string>>()->multitoken()->default_value({}, ""),
       "on failure, also try key blocks split among this many warp columns (1..8), each with its own running "
       "max, merged at the end (fa2_sm80's kWarpsN > 1), in both key-block orders")  //
      ("gnuplot", po::value<std::string>()->default_value(fl::common::kDefaultGnuplot),
       "gnuplot command for the report's plots");
  fl::tools::fa_check::add_family_options(options);
  fl::common::exit_on_signals();
  po::variables_map vm;
  std::vector<int> block_sizes, warps;
  try {
    vm = fl::common::parse_strictly(argc, argv, options);
    block_sizes = count_list(vm, diagnosis::kExtraBlockSize);
    warps = count_list(vm, diagnosis::kWarpColumns);
  } catch (po::error const& e) {
    std::cerr << "fa-check: " << e.what() << " (see --help)\n";
    return fl::common::kExitBadInput;
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return fl::common::kExitOk;
  }
  bool const family_mode = fl::tools::fa_check::family_mode(vm);
  for (char const* file : {"q", "k", "v", "o", "lse", "do", "dq", "dk", "dv"})
    if (family_mode && vm.count(file)) {
      std::cerr << "fa-check: --" << file << " is for outputs from files; --family runs our kernel instead\n";
      return fl::common::kExitBadInput;
    }
  for (char const* required : {"q", "k", "v", "o", "dtype"})
    if (!vm.count(required) && !(family_mode && std::string_view(required) != "dtype")) {
      std::cerr << "fa-check: --" << required << " is required (see --help)\n";
      return fl::common::kExitBadInput;
    }
  std::string const dtype_text = vm["dtype"].as<std::string>();
  std::optional<fl::common::Precision> const claimed = fl::common::parse_precision(dtype_text);
  if (!claimed) {
    std::cerr << "fa-check: --dtype " << dtype_text
              << " is not allowed (fp16, bf16, fp8_e4m3, fp8_e5m2, fp32)\n";
    return fl::common::kExitBadInput;
  }
  std::string const align = vm["causal-align"].as<std::string>();
  if (!vm["causal-align"].defaulted() && !vm["causal"].as<bool>()) {  // it was ignored: no mask to align
    std::cerr << "fa-check: --causal-align " << align << " aligns the causal mask; give --causal too\n";
    return fl::common::kExitBadInput;
  }
  if (align != "bottom-right" && align != "top-left") {
    std::cerr << "fa-check: --causal-align " << align << " is not allowed (bottom-right or top-left)\n";
    return fl::common::kExitBadInput;
  }
  std::size_t sample_rows = 0, sample_key_rows = 0;
  for (auto [range, into] : {std::pair{fl::common::kSampleRows, &sample_rows},
                             std::pair{fl::common::kSampleKeyRows, &sample_key_rows}}) {
    std::string const key(range.what.substr(2));
    if (!vm.count(key)) continue;
    auto const parsed = fl::common::parse_count(range, vm[key].as<std::string>());
    if (!parsed.ok()) {
      std::cerr << "fa-check: " << parsed.error << "\n";
      return fl::common::kExitBadInput;
    }
    *into = std::size_t(parsed.value);
  }
  // Outputs are decided before the work: a check of minutes must not end in an unwritable path.
  if (vm.count("json"))
    if (auto problem = fl::common::output_file_problem(vm["json"].as<std::string>())) {
      std::cerr << "fa-check: --json " << vm["json"].as<std::string>() << ": " << *problem << "\n";
      return fl::common::kExitBadInput;
    }
  if (vm.count("report"))
    if (auto problem = fl::common::output_folder_problem(vm["report"].as<std::string>())) {
      std::cerr << "fa-check: --report " << vm["report"].as<std::string>() << ": " << *problem << "\n";
      return fl::common::kExitBadInput;
    }

  try {
    CheckProblem problem;
    CheckOptions check;
    CheckContext context;
    if (family_mode) {
      auto run = fl::tools::fa_check::run_family(vm, *claimed, scale, sample_rows);
      if (run.exit_code != fl::common::kExitOk) {
        std::cerr << "fa-check: " << run.message << "\n";
        return run.exit_code;
      }
      std::cout << "kernel: " << run.description << "\n";
      context.files.emplace_back("family", run.description);
      problem = std::move(run.problem);
      check = run.options;  // the kernel's dtype claimed, with its FP8 recipe
    } else {
      CheckFiles files;
      files.q = vm["q"].as<std::string>();
      files.k = vm["k"].as<std::string>();
      files.v = vm["v"].as<std::string>();
      files.o = vm["o"].as<std::string>();
      files.lse = optional_path(vm, "lse");
      files.d_o = optional_path(vm, "do");
      files.dq = optional_path(vm, "dq");
      files.dk = optional_path(vm, "dk");
      files.dv = optional_path(vm, "dv");
      problem = load_check_problem(files, vm["causal"].as<bool>(), scale);
      problem.inputs.shape.causal_top_left = align == "top-left";
      check.claimed = *claimed;
    }
    check.threads = threads;
    check.force_full = vm["full"].as<bool>();
    check.sample_rows = sample_rows;
    check.sample_key_rows = sample_key_rows;
    // From the check on, SIGINT/SIGTERM stop it at the next slice of rows (CheckOptions::stop_requested):
    // the rows finished are judged, printed and written (--json, --report) marked interrupted, and
    // fa-check exits 130/143. A second signal of the same kind ends it at once.
    fl::common::StopOnSignals const stop_on_signals;
    check.stop_requested = [] { return fl::common::StopOnSignals::received(); };
    // The differential diagnosis (numerics/diagnosis/) plugs in here; without it a failure reports
    // "no known signature".
    CheckResult const result = run_check(problem.inputs, problem.observed, check,
                                         diagnosis::make_fa_check_diagnoser(block_sizes, threads, warps));

    context.command_line = join_argv(argc, argv);
    context.input_dtype = problem.input_dtype;
    for (char const* key : {"q", "k", "v", "o", "lse", "do", "dq", "dk", "dv"})
      if (vm.count(key)) context.files.emplace_back(key, vm[key].as<std::string>());
    print_check_summary(std::cout, result, problem.inputs.shape);
    if (vm.count("json"))
      fl::common::write_file_atomically(vm["json"].as<std::string>(),
                                        check_json(result, problem.inputs.shape, context));
    if (vm.count("report")) {
      std::filesystem::path const dir = vm["report"].as<std::string>();
      ReportOutcome const outcome =
          write_check_report(dir, result, problem.inputs.shape, context, vm["gnuplot"].as<std::string>());
      std::cout << "report: " << (dir / "report.md").string()
                << (outcome.plots_drawn ? "" : " (plots skipped: gnuplot not available; CSV kept)") << "\n";
    }
    if (result.interrupted()) return fl::common::exit_code_after_signal(result.stop_signal);
    return result.pass ? fl::common::kExitOk : fl::common::kExitCheckFailed;
  } catch (CheckInputError const& e) {
    std::cerr << "fa-check: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  } catch (std::exception const& e) {
    std::cerr << "fa-check: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  }
}
