#include "tuner/cli/bench_options.hpp"

#include <boost/program_options.hpp>

#include <cstdlib>
#include <iostream>
#include <utility>

#include "common/atomic_file.hpp"
#include "common/cli_lists.hpp"
#include "common/exit_codes.hpp"
#include "common/input_limits.hpp"
#include "common/strict_command_line.hpp"
#include "device/families/registry.hpp"
#include "device/run/device_problem.hpp"
#include "numerics/mutants/catalogue.hpp"
#include "tuner/cli/fp8_options.hpp"

namespace po = boost::program_options;

namespace fl::tuner {

namespace {
// Timed runs per shape: the protocol's minimum is 20; past 10^5 the median and p20/p80 no longer move and a
// headline sweep would run for days.
constexpr common::CountRange kRuns{"--runs", 20, 100000, "the protocol's minimum is 20"};
constexpr common::CountRange kWarmup{"--warmup", 0, 10000};
// Ten seconds: the second clock step of the H100 came under a second into sustained load, so a longer
// settle only delays the timing.
constexpr common::CountRange kSettleMs{"--settle-ms", 0, 10000};
constexpr double kMaxCountedBytes = 0x1p60;  // far beyond any GPU, far below 2^64

// A list naming a value twice would check and time it twice: refused.
template <class T>
void refuse_repeats(std::vector<T> const& values, std::string const& option, std::string const& text) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (values[i] == values[j]) bench_bad_input(option + " '" + text + "' names a value twice (each once)");
}
}  // namespace

void bench_bad_input(std::string const& line) {
  std::cerr << "fa-bench: " << line << "\n";
  std::exit(common::kExitBadInput);
}

BenchOptions parse_bench_options(int argc, char** argv) {
  po::options_description desc(
      "fa-bench: check and time one kernel family config over the headline attention shapes\n"
      "(b = 16384/n, h = 2048/d; TFLOP/s: fwd 4*b*h*n^2*d, halved for causal). Options");
  std::string family, config, dtypes, head_dims, seqlens, causal, arch, kernels_dir, mutants, direction;
  Fp8Flags fp8_flags;
  int runs = 30, warmup = 5, settle_ms = 0;
  int batch = 0, heads = 0, heads_kv = 0, seqlen_q = 0;
  std::string const config_help =
      "tunables, e.g. kBlockM=128,kBlockN=64 (unset ones: the family default), and precision options, which "
      "fa-tune never searches (" +
      device::precision_options_text() + ")";
  desc.add_options()("help", "print this help")("family", po::value(&family)->default_value("fa2_sm80"),
                                                ("kernel family: " + device::family_names()).c_str())(
      "config", po::value(&config), config_help.c_str())(
      "dtype", po::value(&dtypes)->default_value("bf16"),
      "element types, comma-separated: fp16, bf16 (fa2_fp8: fp8_e4m3, fp8_e5m2)")(
      "head-dim", po::value(&head_dims)->default_value("64,128"),
      "head dims, comma-separated (64, 128, 256)")(
      "seqlen", po::value(&seqlens)->default_value("512,1024,2048,4096,8192,16384"), "sequence lengths n")(
      "causal", po::value(&causal)->default_value("both"), "yes, no or both (bottom-right aligned masks)")(
      "batch", common::count_value(common::as_option(common::kBatch, "--batch"), &batch),
      "batch size (1..65536) instead of the headline 16384/n (e.g. tiny problems under compute-sanitizer)")(
      "heads", common::count_value(common::as_option(common::kHeads, "--heads"), &heads),
      "query = key/value heads (1..65536) instead of the headline 2048/d")(
      "heads-kv", common::count_value(common::as_option(common::kHeads, "--heads-kv"), &heads_kv),
      "key/value heads (GQA: a divisor of the query heads); default: as many")(
      "seqlen-q", common::count_value(common::as_option(common::kSeqlen, "--seqlen-q"), &seqlen_q),
      "query rows n_q, with --seqlen giving the key lengths n_k (decode: --seqlen-q 1); default n_q = n_k")(
      "direction", po::value(&direction)->default_value("fwd"),
      "fwd or bwd (bwd: a backward family such as fa2_sm80_bwd; O and LSE come from fa2_sm80's forward)")(
      "arch", po::value(&arch), "NVRTC target (sm_80, sm_89, sm_90, sm_90a); default: the device's")(
      "kernels-dir", po::value(&kernels_dir),
      "kernels_src folder (default: FA_KERNELS_DIR or next to the binary)")(
      "mutant", po::value(&mutants),
      "comma-separated mutant switches to compile in, e.g. FA_MUTANT_UNRESCALED_O")(
      "runs", common::count_value(kRuns, &runs)->default_value("30"),
      "timed runs per shape (20..100000); median, p20, p80 reported")(
      "warmup", common::count_value(kWarmup, &warmup)->default_value("5"), "untimed runs first (0..10000)")(
      "settle-ms", common::count_value(kSettleMs, &settle_ms)->default_value("0"),
      "after the warm-up, keep launching untimed for this many ms (0..10000) before timing, so that every "
      "config is timed at the clock the card's power cap settles to under sustained load, not across its "
      "first step down (16-67 ms into the runs on an H100: see experiments/card_transfer)")(
      "csv", po::value<std::string>(), "write the table as CSV to this file (passed: the check's verdict)")(
      "json", po::value<std::string>(), "write the table as JSON to this file")(
      "samples", po::value<std::string>(),
      "write every timed run as CSV to this file: the problem and config, the run's order, its input set, "
      "its time and when it ended (UTC, microseconds: lines up with nvidia-smi's clock and power samples), "
      "for what a median hides (two timing modes, a slow input set, a clock drop)")(
      "check-only", "verify every shape, time nothing")(
      "launch-once",
      "run each shape's launch sequence exactly once, no checks and no timing: for profilers (ncu "
      "counts the DRAM bytes of exactly one forward; forward families only)")(
      "error-study", po::value<std::string>(),
      "FP8 families: measure the RMSE of O over experiments/fp8_error_analysis's inputs, rows and variants "
      "on the GPU, write them as CSV (results.csv's columns + source) to this file, and exit; with "
      "--fp8-pv bf16: FlashAttention-3's recipe (e4m3 per block incoherent) with P V in FP8 and in bf16, "
      "each beside the emulator's replay of the kernel on the same rows")(
      "stability-study", po::value<std::string>(),
      "16-bit families: measure the deviation of O from float64 over experiments/stability's grid (n "
      "256..16384, "
      "each kBlockN of the family's space, normal and fa3_outliers, d 64) in the --dtype precisions, write "
      "results.csv's columns + source to this file, and exit")(
      "compile-space",
      "compile every config of the family's space for each dtype/head dim/mask and print its "
      "registers and spills (no GPU needed; --arch defaults to sm_90a)");
  add_fp8_options(desc, fp8_flags);
  po::variables_map vm;
  try {
    vm = common::parse_strictly(argc, argv, desc);
  } catch (po::error const& e) {
    bench_bad_input(e.what());
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    std::exit(0);
  }
  BenchOptions o;
  o.family = family;
  if (!device::find_family(family))
    bench_bad_input("unknown --family '" + family + "'; known: " + device::family_names());
  if (vm.count("config")) {
    o.config = device::parse_config(config);
    if (!o.config) bench_bad_input("--config '" + config + "' is not NAME=INT[,NAME=INT...]");
  }
  auto const words = common::parse_word_list(dtypes);
  if (!words) bench_bad_input("--dtype '" + dtypes + "' is not a comma-separated list");
  for (auto const& w : *words) {
    auto const p = common::parse_precision(w);
    if (!p || *p == common::Precision::fp32)
      bench_bad_input("--dtype '" + w + "' is not one of fp16, bf16, fp8_e4m3, fp8_e5m2");
    o.dtypes.push_back(*p);
  }
  refuse_repeats(o.dtypes, "--dtype", dtypes);
  auto const fp8 = fp8_options_of(fp8_flags);
  if (auto const* why = std::get_if<std::string>(&fp8)) bench_bad_input(*why);
  o.fp8 = std::get<device::Fp8Options>(fp8);
  for (auto const dtype : o.dtypes)
    if (auto why = fp8_dtype_conflict(o.fp8, dtype)) bench_bad_input(*why);
  if (vm.count("error-study")) o.error_study = vm["error-study"].as<std::string>();
  if (vm.count("stability-study")) o.stability_study = vm["stability-study"].as<std::string>();
  auto const dims = common::parse_positive_int_list(head_dims);
  if (!dims) bench_bad_input("--head-dim '" + head_dims + "' is not a list of positive integers");
  o.head_dims = *dims;
  refuse_repeats(o.head_dims, "--head-dim", head_dims);
  auto const ns = common::parse_positive_int_list(seqlens);
  if (!ns) bench_bad_input("--seqlen '" + seqlens + "' is not a list of positive integers");
  o.seqlens = *ns;
  refuse_repeats(o.seqlens, "--seqlen", seqlens);
  if (causal == "both") {
    o.causal = {false, true};
  } else if (causal == "yes" || causal == "no") {
    o.causal = {causal == "yes"};
  } else {
    bench_bad_input("--causal '" + causal + "' is not one of yes, no, both");
  }
  if (direction != "fwd" && direction != "bwd")
    bench_bad_input("--direction '" + direction + "' is not one of fwd, bwd");
  o.direction = direction == "bwd" ? device::Direction::backward : device::Direction::forward;
  if (vm.count("arch")) {
    auto const a = runtime::parse_target_arch(arch);
    if (!a) bench_bad_input(a.error().message);
    o.arch = a.value();
  }
  if (vm.count("kernels-dir")) o.kernels_dir = kernels_dir;
  if (vm.count("mutant")) {
    auto const m = common::parse_word_list(mutants);
    if (!m) bench_bad_input("--mutant '" + mutants + "' is not a comma-separated list");
    for (auto const& s : *m) {
      if (s.rfind("FA_MUTANT_", 0) != 0)
        bench_bad_input("--mutant '" + s + "' does not start with FA_MUTANT_");
      bool known = false;
      for (auto const& entry : numerics::mutants::kCatalogue) known = known || entry.switch_name == s;
      if (!known) bench_bad_input("--mutant '" + s + "' is not in the catalogue (fa-mutate --list shows it)");
    }
    o.mutants = *m;
  }
  o.runs = runs;  // in range (common::count_value)
  o.warmup = warmup;
  o.settle_ms = settle_ms;
  if (vm.count("csv")) o.csv = vm["csv"].as<std::string>();
  if (vm.count("json")) o.json = vm["json"].as<std::string>();
  if (vm.count("samples")) o.samples = vm["samples"].as<std::string>();
  o.batch = batch;  // each 0 (not given) or in range (common::count_value)
  o.heads = heads;
  o.heads_kv = heads_kv;
  o.seqlen_q = seqlen_q;
  if (o.heads_kv > 0 && o.heads > 0 && o.heads % o.heads_kv != 0)
    bench_bad_input("--heads-kv " + std::to_string(o.heads_kv) + " does not divide --heads " +
                    std::to_string(o.heads) + " (GQA: every key/value head serves h_q / h_kv query heads)");
  for (int n : o.seqlens)
    if (auto complaint = common::out_of_range({"--seqlen", common::kSeqlen.min, common::kSeqlen.max}, n))
      bench_bad_input(*complaint);
  o.check_only = vm.count("check-only") > 0;
  o.launch_once = vm.count("launch-once") > 0;
  if (o.launch_once && (o.check_only || o.direction == device::Direction::backward))
    bench_bad_input("--launch-once runs forward families only and excludes --check-only");
  o.compile_space = vm.count("compile-space") > 0;
  // --runs, --warmup and --settle-ms set the timing and --samples writes it; a mode that times nothing
  // ignored them.
  for (auto const& [mode, given] : {std::pair{"--check-only", o.check_only},
                                    {"--launch-once", o.launch_once},
                                    {"--compile-space", o.compile_space},
                                    {"--error-study", vm.count("error-study") > 0},
                                    {"--stability-study", vm.count("stability-study") > 0}})
    for (auto const& [timing, does] :
         {std::pair{"runs", "sets"}, {"warmup", "sets"}, {"settle-ms", "sets"}, {"samples", "writes"}})
      if (given && vm.count(timing) > 0 && !vm[timing].defaulted())
        bench_bad_input(std::string("--") + timing + " " + does + " the timed runs; " + mode +
                        " times nothing");
  return o;
}

namespace {
// Every (dtype, head dim, mask) problem class of the options, at the first sequence length.
std::vector<device::Problem> problem_classes(BenchOptions const& opt) {
  std::vector<device::Problem> out;
  for (auto const dtype : opt.dtypes)
    for (int const d : opt.head_dims)
      for (bool const causal : opt.causal) {
        out.push_back(timed_problem(opt, opt.seqlens.front(), d, causal, dtype));
      }
  return out;
}
}  // namespace

device::Config bench_config(BenchOptions const& opt, device::Family const& family,
                            device::Problem const& base) {
  device::Config config = family.default_config(base);
  if (opt.config)
    for (auto const& [k, v] : *opt.config) config[k] = v;
  return config;
}

void validate_bench_plan(BenchOptions const& opt, device::Family const& family) {
  for (auto const& [option, path] : {std::pair{"--csv", &opt.csv},
                                     {"--json", &opt.json},
                                     {"--samples", &opt.samples},
                                     {"--error-study", &opt.error_study},
                                     {"--stability-study", &opt.stability_study}}) {
    if (path->empty()) continue;
    if (opt.compile_space)
      bench_bad_input(std::string(option) +
                      " is written from checked and timed shapes; --compile-space "
                      "only compiles");
    if (auto problem = common::output_file_problem(*path))
      bench_bad_input(std::string(option) + " " + *path + ": " + *problem);
  }
  if (opt.compile_space && opt.config)
    bench_bad_input("--config picks one config; --compile-space compiles every config of the space");
  if (!opt.stability_study.empty())
    for (auto const dtype : opt.dtypes)
      if (dtype != common::Precision::fp16 && dtype != common::Precision::bf16)
        bench_bad_input("--stability-study runs fp16 and bf16 (FP8: --error-study), not " +
                        std::string(common::name(dtype)));
  if (!opt.error_study.empty()) {
    device::Problem probe =
        device::headline_problem(1024, 128, false, common::Precision::fp8_e4m3, device::Direction::forward);
    if (family.unsupported(probe))
      bench_bad_input("--error-study needs an FP8 family (fa2_fp8, fa3_sm90), not " + opt.family);
    probe.fp8.bf16_pv = opt.fp8.bf16_pv;
    if (auto why = family.unsupported(probe)) bench_bad_input("--error-study --fp8-pv bf16: " + *why);
    if (opt.fp8.pretransposed_v)
      bench_bad_input(
          "--error-study measures O's error, which V's layout does not change; --fp8-v-layout "
          "transposed is for timing");
  }
  if (!opt.error_study.empty() || !opt.stability_study.empty()) return;  // its own grid: checked by the study
  for (auto const& base : problem_classes(opt)) {
    if (auto why = family.unsupported(base)) bench_bad_input(*why);
    if (!opt.config) continue;
    if (auto why = device::unknown_config_key(family, *opt.config)) bench_bad_input("--config " + *why);
    device::Config const config = bench_config(opt, family, base);
    if (auto why = family.violates(config, base))
      bench_bad_input("--config " + device::to_string(config) + ": " + *why);
  }
}

std::optional<std::string> device_fit_problem(BenchOptions const& opt, device::Family const& family,
                                              std::size_t device_bytes) {
  for (auto const& base : problem_classes(opt))
    for (int const n : opt.seqlens) {
      device::Problem const p = timed_problem(opt, n, base.shape.head_dim, base.shape.causal, base.dtype);
      // Bounded first in floating point, so that the byte count below cannot wrap: no term of it is more
      // than 16 bytes per element of the largest of Q (b h n d) and a score matrix (b h n n).
      auto const& s = p.shape;
      double const bound =
          16.0 * s.batch * s.heads_q * s.seqlen_q * double(std::max(s.seqlen_k, s.head_dim) + s.head_dim);
      if (bound > kMaxCountedBytes)
        return device::describe(p) + " needs more than 2^60 bytes of GPU memory; the GPU has " +
               std::to_string(device_bytes);
      std::size_t const needed =
          device::DeviceProblem::bytes_needed(p, family.scratch(bench_config(opt, family, p), p));
      if (needed > device_bytes)
        return device::describe(p) + " needs " + std::to_string(needed) +
               " bytes of GPU memory; the GPU has " + std::to_string(device_bytes);
    }
  return std::nullopt;
}

// The headline shape for n and d, or the --batch/--heads/--heads-kv/--seqlen-q override.
device::Problem timed_problem(BenchOptions const& opt, int n, int d, bool causal, common::Precision dtype) {
  device::Problem p = device::headline_problem(n, d, causal, dtype, opt.direction);
  if (opt.batch > 0) p.shape.batch = opt.batch;
  if (opt.heads > 0) p.shape.heads_q = p.shape.heads_kv = opt.heads;
  if (opt.heads_kv > 0) p.shape.heads_kv = opt.heads_kv;
  if (opt.seqlen_q > 0) p.shape.seqlen_q = opt.seqlen_q;
  p.fp8 = opt.fp8;
  return p;
}

}  // namespace fl::tuner
