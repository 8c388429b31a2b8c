// fa-bench: compile one family config (or the family default), check it on small awkward problems and
// on the timed shape itself (sampled rows), then time it over the headline shapes (b = 16384 / n,
// h = 2048 / d) by the project protocol, and print / write a table. Exit 0 all checks pass, 1 a check
// failed, 2 bad command line, 3 no GPU.
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "numerics/atomic_file.hpp"
#include "numerics/precision.hpp"
#include "runtime/device.hpp"
#include "runtime/exit_codes.hpp"
#include "runtime/kernel_source.hpp"
#include "runtime/target_arch.hpp"
#include "tuner/bench_table.hpp"
#include "tuner/cli_lists.hpp"
#include "tuner/compile/compile_config.hpp"
#include "tuner/compile/space_compile.hpp"
#include "tuner/families/fa2_sm80.hpp"
#include "tuner/families/registry.hpp"
#include "tuner/run/benchmark.hpp"
#include "tuner/run/device_problem.hpp"
#include "tuner/run/family_runner.hpp"
#include "tuner/run/fp8_error_study.hpp"
#include "tuner/run/run_once.hpp"

namespace po = boost::program_options;
using namespace fl;
using namespace fl::tuner;

namespace {

// numerics' writer (temporary name, then rename) reports failure by exception; fa-bench turns it into
// its one-line bad-input message.
bool write_or_false(std::filesystem::path const& path, std::string const& text) {
  try {
    numerics::write_file_atomically(path, text);
    return true;
  } catch (std::exception const&) {
    return false;
  }
}

constexpr int kMinRuns = 20;
constexpr std::size_t kCheckRows = 256;  // sampled query rows on the timed shape (plus numerics' own)
constexpr std::uint64_t kCheckSeed = 7;
// numerics' sampled backward reference needs every LSE and D of the sampled heads (two dot products per
// score): checked on the timed shape up to this n; larger n are timed after the edge-problem checks only.
constexpr int kMaxCheckedBackwardSeqlen = 2048;
constexpr std::uint64_t kTimedInputSeed = 99;

[[noreturn]] void bad_input(std::string const& line) {
  std::cerr << "fa-bench: " << line << "\n";
  std::exit(runtime::kExitBadInput);
}

struct Options {
  std::string family = "fa2_sm80";
  std::optional<Config> config;
  std::vector<numerics::Precision> dtypes;
  std::vector<int> head_dims, seqlens;
  std::vector<bool> causal;
  std::optional<runtime::TargetArch> arch;
  std::optional<std::filesystem::path> kernels_dir;
  std::vector<std::string> mutants;
  int runs = 30, warmup = 5;
  int batch = 0, heads = 0;  // 0: the headline shape's b = 16384/n, h = 2048/d
  std::string csv, json;
  bool check_only = false;
  bool launch_once = false;
  bool compile_space = false;
  Direction direction = Direction::forward;
  Fp8Options fp8;
  std::string error_study;  // --error-study: CSV path
};

Options parse(int argc, char** argv) {
  po::options_description desc(
      "fa-bench: check and time one kernel family config over the headline attention shapes\n"
      "(b = 16384/n, h = 2048/d; TFLOP/s: fwd 4*b*h*n^2*d, halved for causal). Options");
  std::string family, config, dtypes, head_dims, seqlens, causal, arch, kernels_dir, mutants, direction;
  std::string fp8_scaling;
  int runs = 30, warmup = 5, fp8_block_rows = numerics::kDefaultFp8BlockRows;
  desc.add_options()("help", "print this help")("family", po::value(&family)->default_value("fa2_sm80"),
                                                ("kernel family: " + family_names()).c_str())(
      "config", po::value(&config), "tunables, e.g. kBlockM=128,kBlockN=64 (unset ones: the family default)")(
      "dtype", po::value(&dtypes)->default_value("bf16"),
      "element types, comma-separated: fp16, bf16 (fa2_fp8: fp8_e4m3, fp8_e5m2)")(
      "head-dim", po::value(&head_dims)->default_value("64,128"),
      "head dims, comma-separated (64, 128, 256)")(
      "seqlen", po::value(&seqlens)->default_value("512,1024,2048,4096,8192,16384"), "sequence lengths n")(
      "causal", po::value(&causal)->default_value("both"), "yes, no or both (bottom-right aligned masks)")(
      "batch", po::value<int>(),
      "batch size instead of the headline 16384/n (e.g. tiny problems under compute-sanitizer)")(
      "heads", po::value<int>(), "query = key/value heads instead of the headline 2048/d")(
      "direction", po::value(&direction)->default_value("fwd"),
      "fwd or bwd (bwd: a backward family such as fa2_sm80_bwd; O and LSE come from fa2_sm80's forward)")(
      "arch", po::value(&arch), "NVRTC target (sm_80, sm_89, sm_90, sm_90a); default: the device's")(
      "kernels-dir", po::value(&kernels_dir),
      "kernels_src folder (default: FA_KERNELS_DIR or next to the binary)")(
      "mutant", po::value(&mutants),
      "comma-separated mutant switches to compile in, e.g. FA_MUTANT_UNRESCALED_O")(
      "runs", po::value(&runs)->default_value(30), "timed runs per shape (>= 20); median, p20, p80 reported")(
      "warmup", po::value(&warmup)->default_value(5), "untimed runs first")(
      "csv", po::value<std::string>(), "write the table as CSV to this file")(
      "json", po::value<std::string>(), "write the table as JSON to this file")(
      "check-only", "verify every shape, time nothing")(
      "launch-once",
      "run each shape's launch sequence exactly once, no checks and no timing: for profilers (ncu "
      "counts the DRAM bytes of exactly one forward; forward families only)")(
      "fp8-scaling", po::value(&fp8_scaling)->default_value("per_tensor"),
      "FP8 dtypes: per_tensor or per_block scaling of Q, K, V (numerics' quantize_fp8)")(
      "fp8-block-rows", po::value(&fp8_block_rows)->default_value(numerics::kDefaultFp8BlockRows),
      "FP8 per-block scaling: rows per block of each (batch, head) matrix (a multiple of 32)")(
      "incoherent",
      "FP8 dtypes: rotate Q and K by the random Hadamard transform before quantising (host side)")(
      "error-study", po::value<std::string>(),
      "FP8 families: measure the RMSE of O over experiments/fp8_error_analysis's inputs, rows and variants "
      "on the GPU, write them as CSV (results.csv's columns + source) to this file, and exit")(
      "compile-space",
      "compile every config of the family's space for each dtype/head dim/mask and print its "
      "registers and spills (no GPU needed; --arch defaults to sm_90a)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (po::error const& e) {
    bad_input(e.what());
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    std::exit(0);
  }
  Options o;
  o.family = family;
  if (!find_family(family)) bad_input("unknown --family '" + family + "'; known: " + family_names());
  if (vm.count("config")) {
    o.config = parse_config(config);
    if (!o.config) bad_input("--config '" + config + "' is not NAME=INT[,NAME=INT...]");
  }
  auto const words = parse_word_list(dtypes);
  if (!words) bad_input("--dtype '" + dtypes + "' is not a comma-separated list");
  for (auto const& w : *words) {
    auto const p = numerics::parse_precision(w);
    if (!p || *p == numerics::Precision::fp32)
      bad_input("--dtype '" + w + "' is not one of fp16, bf16, fp8_e4m3, fp8_e5m2");
    o.dtypes.push_back(*p);
  }
  auto const scaling = numerics::parse_fp8_scaling(fp8_scaling);
  if (!scaling) bad_input("--fp8-scaling '" + fp8_scaling + "' is not one of per_tensor, per_block");
  o.fp8.scaling = *scaling;
  if (fp8_block_rows <= 0)
    bad_input("--fp8-block-rows " + std::to_string(fp8_block_rows) + " is not positive");
  o.fp8.block_rows = fp8_block_rows;
  o.fp8.incoherent = vm.count("incoherent") > 0;
  if (vm.count("error-study")) o.error_study = vm["error-study"].as<std::string>();
  auto const dims = parse_positive_int_list(head_dims);
  if (!dims) bad_input("--head-dim '" + head_dims + "' is not a list of positive integers");
  o.head_dims = *dims;
  auto const ns = parse_positive_int_list(seqlens);
  if (!ns) bad_input("--seqlen '" + seqlens + "' is not a list of positive integers");
  o.seqlens = *ns;
  if (causal == "both") {
    o.causal = {false, true};
  } else if (causal == "yes" || causal == "no") {
    o.causal = {causal == "yes"};
  } else {
    bad_input("--causal '" + causal + "' is not one of yes, no, both");
  }
  if (direction != "fwd" && direction != "bwd")
    bad_input("--direction '" + direction + "' is not one of fwd, bwd");
  o.direction = direction == "bwd" ? Direction::backward : Direction::forward;
  if (vm.count("arch")) {
    auto const a = runtime::parse_target_arch(arch);
    if (!a) bad_input(a.error().message);
    o.arch = a.value();
  }
  if (vm.count("kernels-dir")) o.kernels_dir = kernels_dir;
  if (vm.count("mutant")) {
    auto const m = parse_word_list(mutants);
    if (!m) bad_input("--mutant '" + mutants + "' is not a comma-separated list");
    for (auto const& s : *m)
      if (s.rfind("FA_MUTANT_", 0) != 0) bad_input("--mutant '" + s + "' does not start with FA_MUTANT_");
    o.mutants = *m;
  }
  if (runs < kMinRuns) bad_input("--runs " + std::to_string(runs) + " is below the protocol's minimum of 20");
  if (warmup < 0) bad_input("--warmup " + std::to_string(warmup) + " is negative");
  o.runs = runs;
  o.warmup = warmup;
  if (vm.count("csv")) o.csv = vm["csv"].as<std::string>();
  if (vm.count("json")) o.json = vm["json"].as<std::string>();
  for (char const* name : {"batch", "heads"}) {
    if (!vm.count(name)) continue;
    int const v = vm[name].as<int>();
    if (v < 1) bad_input("--" + std::string(name) + " " + std::to_string(v) + " is not a positive integer");
    (std::string(name) == "batch" ? o.batch : o.heads) = v;
  }
  o.check_only = vm.count("check-only") > 0;
  o.launch_once = vm.count("launch-once") > 0;
  if (o.launch_once && (o.check_only || o.direction == Direction::backward))
    bad_input("--launch-once runs forward families only and excludes --check-only");
  o.compile_space = vm.count("compile-space") > 0;
  return o;
}

// The headline shape for n and d, or the --batch/--heads override.
Problem timed_problem(Options const& opt, int n, int d, bool causal, numerics::Precision dtype) {
  Problem p = headline_problem(n, d, causal, dtype, opt.direction);
  if (opt.batch > 0) p.shape.batch = opt.batch;
  if (opt.heads > 0) p.shape.heads_q = p.shape.heads_kv = opt.heads;
  p.fp8 = opt.fp8;
  return p;
}

std::string today() {
  auto const t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// Small problems that exercise every edge: tails in both sequences, n_q != n_k both ways (causal rows
// fully masked when n_q > n_k), GQA, a single partial block.
std::vector<Problem> edge_problems(Problem const& base) {
  std::vector<Problem> out;
  auto add = [&](int b, int hq, int hkv, int nq, int nk) {
    Problem p = base;
    p.shape.batch = b;
    p.shape.heads_q = hq;
    p.shape.heads_kv = hkv;
    p.shape.seqlen_q = nq;
    p.shape.seqlen_k = nk;
    out.push_back(p);
  };
  add(2, 4, 2, 1000, 1000);
  add(1, 6, 2, 257, 513);
  add(1, 2, 1, 513, 130);
  add(1, 2, 2, 77, 77);
  return out;
}

}  // namespace

// --compile-space: every config, NVRTC only. Exit 1 when a config the host-side constraints allow fails to
// compile (the mirror of the kernel's static_asserts is wrong).
int compile_space_main(Options const& opt, Family const& family) {
  auto const kernels_dir = runtime::resolve_kernels_dir(opt.kernels_dir);
  if (!kernels_dir) bad_input(kernels_dir.error().one_line());
  CompileSpec const spec{opt.arch.value_or(runtime::TargetArch::sm_90a), kernels_dir.value(), opt.mutants};
  unsigned const threads = std::max(1u, std::thread::hardware_concurrency());
  bool all_compiled = true;
  for (auto const dtype : opt.dtypes)
    for (int const d : opt.head_dims)
      for (bool const causal : opt.causal) {
        Problem p = headline_problem(opt.seqlens.front(), d, causal, dtype, opt.direction);
        p.fp8 = opt.fp8;
        if (auto why = family.unsupported(p)) bad_input(*why);
        auto const t0 = std::chrono::steady_clock::now();
        auto const entries = compile_space(family, p, spec, threads);
        double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        int spilling = 0, failed = 0;
        for (auto const& e : entries) {
          std::printf("  %-90s %s\n", to_string(e.config).c_str(),
                      e.compiled ? ("regs " + std::to_string(e.max_registers) + " spills " +
                                    std::to_string(e.spill_bytes))
                                       .c_str()
                                 : ("FAILED: " + e.error).c_str());
          spilling += e.compiled && e.spill_bytes > 0;
          failed += !e.compiled;
        }
        std::printf("%s %s d%d %s: %zu configs, %d failed, %d spill, %.1f s on %u threads\n",
                    std::string(family.name()).c_str(), std::string(numerics::name(dtype)).c_str(), d,
                    causal ? "causal" : "full", entries.size(), failed, spilling, s, threads);
        all_compiled = all_compiled && failed == 0;
      }
  return all_compiled ? runtime::kExitOk : runtime::kExitCheckFailed;
}

// --error-study PATH: the FP8 error analysis's forward rows measured on this GPU (tuner/run/fp8_error_study).
int error_study_main(Options const& opt, Family const& family, CompileSpec const& spec,
                     runtime::DeviceInfo const& device, runtime::TargetArch arch) {
  Problem probe = headline_problem(1024, 128, false, numerics::Precision::fp8_e4m3, Direction::forward);
  if (family.unsupported(probe)) bad_input("--error-study needs an FP8 family (fa2_fp8), not " + opt.family);
  Fp8ErrorStudyOptions options;
  options.head_dims = opt.head_dims;
  options.seqlens = opt.seqlens;
  options.source =
      device.name + " " + std::string(runtime::arch_name(arch)) + " " + opt.family + " " + today();
  auto csv = run_fp8_error_study(family, spec, options, [](std::string const& line) {
    std::printf("  %s", line.c_str());
    std::fflush(stdout);
  });
  if (!csv) {
    std::fprintf(stderr, "%s\n%s\n", csv.error().one_line().c_str(), csv.error().log.c_str());
    return runtime::kExitCheckFailed;
  }
  if (!write_or_false(opt.error_study, csv.value()))
    bad_input("cannot write --error-study " + opt.error_study);
  std::printf("wrote %s\n", opt.error_study.c_str());
  return runtime::kExitOk;
}

int main(int argc, char** argv) {
  Options const opt = parse(argc, argv);
  auto const family = find_family(opt.family);
  if (opt.compile_space) return compile_space_main(opt, *family);
  auto context = runtime::PrimaryContext::retain(0);
  if (!context) runtime::exit_no_gpu(context.error());
  auto const& device = context->info();
  runtime::TargetArch arch = runtime::TargetArch::sm_90a;
  if (opt.arch) {
    arch = *opt.arch;
  } else {
    auto const a = runtime::arch_for_device(device.cc_major, device.cc_minor);
    if (!a) runtime::exit_no_gpu(a.error());
    arch = a.value();
  }
  auto const kernels_dir = runtime::resolve_kernels_dir(opt.kernels_dir);
  if (!kernels_dir) bad_input(kernels_dir.error().one_line());
  CompileSpec const spec{arch, kernels_dir.value(), opt.mutants};
  std::printf("device %s, sm %d, driver %d, arch %s, %s\n", device.name.c_str(), device.sm_count,
              device.driver_version, std::string(runtime::arch_name(arch)).c_str(), today().c_str());
  if (!opt.error_study.empty()) return error_study_main(opt, *family, spec, device, arch);

  std::vector<BenchRow> rows;
  bool all_pass = true;
  for (auto const dtype : opt.dtypes)
    for (int const d : opt.head_dims)
      for (bool const causal : opt.causal) {
        Problem base = headline_problem(opt.seqlens.front(), d, causal, dtype, opt.direction);
        base.fp8 = opt.fp8;
        if (auto why = family->unsupported(base)) bad_input(*why);
        Config config = family->default_config(base);
        if (opt.config)
          for (auto const& [k, v] : *opt.config) config[k] = v;
        if (auto why = family->violates(config, base))
          bad_input("--config " + to_string(config) + ": " + *why);
        auto program = compile_family_config(*family, config, base, spec);
        if (!program) {
          std::fprintf(stderr, "%s\n%s\n", program.error().one_line().c_str(), program.error().log.c_str());
          return runtime::kExitCheckFailed;
        }
        // The heaviest kernel of the launch sequence (a backward's first launch is its small preprocess).
        int regs = 0;
        std::size_t spills = 0;
        for (auto const& name : family->name_expressions(config, base)) {
          auto const* res = program->resources_of(name);
          if (!res) continue;
          regs = std::max(regs, res->registers);
          spills += res->spill_store_bytes + res->spill_load_bytes;
        }
        std::printf("%s %s d%d %s: %s  regs %d spills %zu  compile %.0f ms\n", opt.family.c_str(),
                    std::string(numerics::name(dtype)).c_str(), d, causal ? "causal" : "full",
                    to_string(config).c_str(), regs, spills, program->compile_ms);
        // The forward that fills O and LSE before a backward is timed.
        Fa2Sm80Family const forward_family;
        std::optional<runtime::Result<runtime::CompiledProgram>> forward_program;
        if (opt.direction == Direction::backward) {
          Problem fwd = base;
          fwd.direction = Direction::forward;
          forward_program =
              compile_family_config(forward_family, forward_family.default_config(fwd), fwd, spec);
          if (!*forward_program) {
            std::fprintf(stderr, "%s\n", (*forward_program).error().one_line().c_str());
            return runtime::kExitCheckFailed;
          }
        }
        if (opt.launch_once) {
          for (int const n : opt.seqlens) {
            Problem const p = timed_problem(opt, n, d, causal, dtype);
            auto const ran =
                run_once(*family, config, p, program.value(), make_normal_inputs(p, kTimedInputSeed));
            BenchRow row;
            row.family = opt.family;
            row.config = to_string(config);
            row.dtype = std::string(numerics::name(dtype));
            row.mask = causal ? "causal" : "full";
            row.direction = direction_name(opt.direction);
            row.batch = p.shape.batch;
            row.heads = p.shape.heads_q;
            row.seqlen = n;
            row.head_dim = d;
            row.check = ran ? "launched once, not checked" : ran.error().one_line();
            row.registers = regs;
            row.spill_bytes = spills;
            row.device_bytes = DeviceProblem::bytes_needed(p, family->scratch(config, p));
            std::printf("  %-40s launched once  %8.1f MiB  %s\n", describe(p).c_str(),
                        double(row.device_bytes) / (1024.0 * 1024.0), row.check.c_str());
            rows.push_back(row);
            all_pass = all_pass && ran.ok();
          }
          continue;
        }
        for (auto const& edge : edge_problems(base)) {
          auto check = check_config(*family, config, edge, program.value(), {});
          std::string const text = check ? check->summary : check.error().one_line();
          bool const pass = check && check->pass;
          all_pass = all_pass && pass;
          std::printf("  check %-36s %s\n", describe(edge).c_str(), text.c_str());
        }
        for (int const n : opt.seqlens) {
          Problem const p = timed_problem(opt, n, d, causal, dtype);
          auto const inputs = make_normal_inputs(p, kTimedInputSeed);
          bool const backward = opt.direction == Direction::backward;
          runtime::Result<Verdict> check = Verdict{true, "not checked at this n (edge problems checked)"};
          if (!backward || n <= kMaxCheckedBackwardSeqlen)
            check = check_config(*family, config, p, program.value(), {kCheckRows, kCheckSeed}, &inputs);
          bool const pass = check && check->pass;
          all_pass = all_pass && pass;
          BenchRow row{opt.family,
                       to_string(config),
                       std::string(numerics::name(dtype)),
                       causal ? "causal" : "full",
                       direction_name(opt.direction),
                       p.shape.batch,
                       p.shape.heads_q,
                       n,
                       d,
                       {},
                       0.0,
                       check ? check->summary : check.error().one_line(),
                       regs,
                       spills,
                       DeviceProblem::bytes_needed(p, family->scratch(config, p))};
          if (!opt.check_only) {
            // A backward reads O and LSE: written on each input set by fa2_sm80's forward, as in training.
            std::function<runtime::Status(DeviceProblem&)> prepare;
            if (backward) {
              prepare = [&](DeviceProblem& dp) -> runtime::Status {
                Problem fwd = p;
                fwd.direction = Direction::forward;
                auto runner = FamilyRunner::load(forward_family, forward_family.default_config(fwd), fwd,
                                                 forward_program->value());
                if (!runner) return runner.error();
                return runner->run(dp.params);
              };
            }
            auto timed = time_config(*family, config, p, program.value(), device, {opt.warmup, opt.runs},
                                     inputs, prepare);
            if (!timed) {
              row.check += "; timing: " + timed.error().one_line();
            } else {
              row.stats = timed->stats;
              row.tflops = timed->tflops;
            }
          }
          constexpr double kMiB = 1024.0 * 1024.0;
          std::printf("  %-40s %9.3f ms  p20 %.3f p80 %.3f  %6.1f TFLOP/s  %8.1f MiB  %s\n",
                      describe(p).c_str(), row.stats.median_ms, row.stats.p20_ms, row.stats.p80_ms,
                      row.tflops, double(row.device_bytes) / kMiB, row.check.c_str());
          std::fflush(stdout);
          rows.push_back(row);
        }
      }
  std::string const device_text = device.identity() + " " + std::string(runtime::arch_name(arch));
  if (!opt.csv.empty() && !write_or_false(opt.csv, to_csv(rows))) bad_input("cannot write --csv " + opt.csv);
  if (!opt.json.empty() && !write_or_false(opt.json, to_json(rows, device_text, today())))
    bad_input("cannot write --json " + opt.json);
  std::printf("%s\n", all_pass ? "all checks passed" : "SOME CHECKS FAILED");
  return all_pass ? runtime::kExitOk : runtime::kExitCheckFailed;
}
